"""The plan check in the TUI (issue 35): the chat says at once which step looks no longer
needed, and when its turn comes the review says why and what `a` and `r` do; `a` drops it."""

from __future__ import annotations

import pytest

from tests.engine_support import MUL_ON_SUB
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.timing_support import titles
from tests.tui.app_support import (
    SIZE,
    SUB,
    chat_text,
    finish_session,
    make_app,
    plan_reply,
    reviewing,
    visible_lines,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_step_no_longer_needed_is_reviewed_as_a_drop(make_repo, scripted_server) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB + MUL_ON_SUB),  # step 1 adds mul too
        Reply(text="DROP 2: step 1 already adds mul"),
    )
    app = make_app(repo, scripted_server.base_url, "add sub and mul", plan_check=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app))
        await wait_for(pilot, lambda: "looks no longer needed once step 1" in chat_text(app))
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        assert "no longer needed, says the plan check" in " ".join(visible_lines(app.status))
        assert "Accept to drop it, or reject it with a reason" in chat_text(app)
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo)[0] == "Add sub"  # one commit: step 2 dropped, nothing committed for it
    assert app.plan_pane.status_of(2) == "skipped"
