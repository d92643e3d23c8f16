"""The app when git refuses an accept (your pre-commit hook exits 1): a notification with the
hook's words, the step still shown for review, nothing written; fix the cause, press `a` again,
and it is committed. The real app through Pilot, the real engine, git and hook."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.headless.test_accept_refused import refusing_hook
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.timing_support import RunProcess
from tests.tui.app_support import (
    SIZE,
    SUB,
    add_sub_app,
    chat_text,
    diff_text,
    finish_session,
    make_app,
    reviewing,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
@pytest.mark.parametrize("approval", ["ask", "auto"])
async def test_a_refused_accept_keeps_the_step_under_review_until_accepted_again(
    make_repo, scripted_server, approval: str
) -> None:
    repo = make_repo()
    block = refusing_hook(repo, "pre-commit", "lint: calc.py: line too long")
    app = add_sub_app(repo, scripted_server, approval=approval)
    async with app.run_test(size=SIZE) as pilot:
        if approval == "ask":
            await wait_for(pilot, reviewing(app, 1))
            await pilot.press("a")

        def told() -> bool:
            """a notification that the step is not committed"""
            return any("lint: calc.py: line too long" in n.message for n in app._notifications)

        await wait_for(pilot, told)
        # In auto, git's refusal hands the step to you: the same proposal, asked about now.
        await wait_for(pilot, reviewing(app, 2))
        assert app.plan_pane.status_of(1) == "awaiting review"
        assert "def sub" in diff_text(app)
        assert git(repo, "log", "--format=%s") == "initial"
        assert git(repo, "status", "--porcelain") == ""
        assert (
            app.controller.engine is not None and app.controller.engine.is_running
        )  # the session goes on

        block.unlink()  # the user fixes the lint
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "--format=%s").splitlines() == ["add sub", "initial"]
    assert len(scripted_server.chat_requests) == 1  # the same proposal, no new model call


@whole_session
async def test_a_session_stopped_at_a_refused_accept_resumes_in_the_app_with_the_step_again(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    refusing_hook(repo, "pre-commit", "lint: calc.py: line too long")
    scripted_server.script(Reply(text=SUB))
    stopped = RunProcess(repo, scripted_server, "add sub", "--no-plan")  # --yes: stops there
    try:
        assert stopped.finish()[0] == 1
    finally:
        stopped.kill()
    (repo / ".git" / "hooks" / "pre-commit").unlink()  # the user fixed the cause

    app = make_app(repo, scripted_server.base_url)
    app.options.resume = ""  # tui-engineer --resume
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        told = chat_text(app)
        assert "Step 1 is not committed" in told and "lint: calc.py: line too long" in told
        await pilot.press("a")
        await wait_for(pilot, lambda: git(repo, "log", "-1", "--format=%s") == "add sub")
        await app.stop_work()
    assert len(scripted_server.chat_requests) == 1  # shown again: no new model call
