"""The TUI on a "fix this" request whose test was red at the start (issue 33, part 1): the Plan
pane says which old failure the step fixes, the model's wrong first fix goes to the fix loop
(never offered as "tests pass"), and the right one is reviewed saying what now passes."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.engine.test_fix_old_failure import ADD_ID, CALC, RIGHT, WRONG
from tests.engine_support import edit
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


@whole_session
async def test_a_failure_the_change_runs_through_is_shown_in_the_tests_pane_and_the_chat(
    make_repo, scripted_server
) -> None:
    """ "Add a docstring to add", test_add red at the start (issue 45): the first run's header
    says test_add still fails and the change runs through it; the model disowns it with a
    reason, which the chat shows beside the review. Never "tests pass"."""
    repo = make_repo({k: v for k, v in CALC.items() if k != ".gitignore"})
    step = {"title": "Document add", "files": ["calc.py"]}
    plan = "```json\n" + json.dumps({"steps": [step]}) + "\n```\n"
    doc = edit("calc.py", "def add(a, b):\n", 'def add(a, b):\n    """The sum."""\n')
    why = "the step documents add; the subtraction is a separate bug"
    scripted_server.script(
        Reply(text=plan),
        Reply(text=doc),
        Reply(text="test_add failed before."),
        Reply(text=f"NOT THIS STEP'S: {ADD_ID}: {why}\n"),
    )
    app = make_app(repo, scripted_server.base_url, "Add a docstring to add")
    async with app.run_test(size=SIZE) as pilot:
        shown = "still failing, and your change runs through it: test_add"
        await wait_for(pilot, lambda: shown in app.test_pane.header_text)
        await wait_for(pilot, reviewing(app, 1))
        assert "tests pass)" not in app.status.phase
        text = chat_text(app)
        assert "Still failing, and your change runs through it" in text
        assert f"Not this step's, says the model: {why}" in " ".join(text.split())
        await pilot.press("a")
        await finish_session(pilot, app)
    assert why in git(repo, "log", "-1", "--format=%B")
    assert "The sum." in git(repo, "show", "HEAD:calc.py")
