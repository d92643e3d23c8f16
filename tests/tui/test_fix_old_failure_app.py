"""The TUI on a "fix this" request whose test was red at the start (issue 33, part 1): the Plan
pane says which old failure the step fixes, the model's wrong first fix goes to the fix loop
(never offered as "tests pass"), and the right one is reviewed saying what now passes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.engine.test_fix_old_failure import ADD_ID, CALC, RIGHT, WRONG
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    chat_text,
    finish_session,
    make_app,
    reviewing,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_the_wrong_first_fix_is_never_offered_and_the_right_one_says_what_now_passes(
    make_repo, scripted_server
) -> None:
    repo = make_repo({k: v for k, v in CALC.items() if k != ".gitignore"})
    step = {"title": "Repair add", "files": ["calc.py"], "fixes": [ADD_ID]}
    plan = "```json\n" + json.dumps({"steps": [step]}) + "\n```\n"
    scripted_server.script(
        Reply(text=plan), Reply(text=WRONG), Reply(text="add multiplies."), Reply(text=RIGHT)
    )
    app = make_app(repo, scripted_server.base_url, "fix add")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: 1 in app.plan_pane.rows)
        assert app.plan_pane.rows[1].info.fixes == (ADD_ID,)
        assert "fixes test_add" in str(app.plan_pane.get_option_at_index(0).prompt)
        await wait_for(pilot, reviewing(app, 1))
        assert len(scripted_server.chat_requests) == 4  # plan, propose, diagnose, fix
        assert app.status.phase == "review step 1 (tests pass)"
        assert "now passes: test_add" in app.test_pane.header_text
        assert f"Now passes (failed before this session): {ADD_ID}" in chat_text(app)
        await pilot.press("a")
        await finish_session(pilot, app)
    assert "return a + b" in git(repo, "show", "HEAD:calc.py")
