"""The app says "accepted" only once the decision is on disk: the moment the status bar says
it, the step's accept journal is written (or its commit made), so a kill -9 from then on
still ends with the step committed (tests/engine/test_decision_durable.py kills a real run at
that line). The real app through Pilot, the real engine and git."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, add_sub_app, finish_session, reviewing, wait_for

JOURNAL = "tui-engineer-accept.json"


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_the_status_bar_says_accepted_only_once_the_accept_is_on_disk(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server)
    seen: list[tuple[str, bool]] = []  # (what the status bar said, the accept on disk then)

    def said(phase: str) -> None:
        on_disk = (repo / ".git" / JOURNAL).exists() or "add sub" in git(repo, "log")
        seen.append((phase, on_disk))

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        app.watch(app.status, "phase", said, init=False)
        await pilot.press("a")
        await wait_for(pilot, lambda: any(p.startswith("accepted") for p, _ in seen))
        await finish_session(pilot, app)
    announced = [on_disk for phase, on_disk in seen if phase.startswith("accepted")]
    assert announced and all(announced), seen
    assert seen[0] == ("accepting: keeping your decision", False)  # the key press, at once
    assert git(repo, "log", "--format=%s").splitlines() == ["add sub", "initial"]
