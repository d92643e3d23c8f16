"""Approval modes in the TUI: the status bar always shows the mode, `m` switches it, and in
`auto` a step whose tests pass is committed without a key press (a failing one still waits)."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    MUL_BUGGY,
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
async def test_m_switches_to_auto_and_a_passing_step_commits_without_a_key(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    planning = Gate()  # the model "thinks" about the plan while the human switches the mode
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul"), hold=planning),
        Reply(text=SUB),
        Reply(text=MUL_BUGGY),  # fails, and no fix is tried: asked about even in auto
    )
    app = make_app(repo, scripted_server.base_url, "add sub and mul", max_fix_attempts=0)
    async with app.run_test(size=SIZE) as pilot:
        await planning.arrived()
        assert "mode: ask" in visible_lines(app.status)[0]
        await pilot.press("m")
        await pilot.pause()
        assert "mode: auto" in visible_lines(app.status)[0]
        planning.open()
        await wait_for(pilot, lambda: app.plan_pane.status_of(1) == "accepted")
        assert "Step 1 accepted: auto (tests passed)." in chat_text(app)
        await wait_for(pilot, reviewing(app, 2))  # the failing step waits for the human
        assert app.plan_pane.status_of(2) == "awaiting review"
        await pilot.press("a")
        await finish_session(pilot, app)
    newest, first = git(repo, "log", "--format=%B%x00").split("\x00")[:2]
    assert "Accepted: auto (tests passed)." in first
    assert "Accepted: by you." in newest
