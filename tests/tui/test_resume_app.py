"""`tui-engineer --resume` in the app (Pilot, the real engine, the scripted model over real
HTTP, real git and pytest): a session quit with Ctrl-C while step 2's reply is held goes on in
a new app from its record, showing what happened before, with no new plan call."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.engine_support import MUL_ON_SUB
from tests.headless.test_resume import is_plan_call
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import hold_step_2, titles
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    chat_text,
    make_app,
    reviewing,
    sub_and_mul_app,
    visible_lines,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import ProblemScreen, QuitScreen

pytestmark = pytest.mark.usefixtures("api_key")


async def quit_with_ctrl_c_twice(pilot: Pilot, app: TuiEngineerApp) -> None:
    """Quit as a user who means it: Ctrl+C, then Ctrl+C again in the quit dialog; wait until the
    app has exited, its session's record left to resume."""
    await pilot.press("ctrl+c")
    await wait_for_screen(pilot, app, QuitScreen)
    await pilot.press("ctrl+c")
    await wait_for(pilot, lambda: app.return_code is not None, timeout=30)


def resuming_app(repo: Path, server: ScriptedServer) -> TuiEngineerApp:
    """The app as `tui-engineer --resume` starts it on `repo`: no request, the last session's."""
    app = make_app(repo, server.base_url)
    app.options.resume = ""
    return app


async def quit_while_step_2_is_written(repo: Path, server: ScriptedServer) -> None:
    gate = hold_step_2(server)
    app = make_app(repo, server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await gate.arrived()  # the model is writing step 2
        await quit_with_ctrl_c_twice(pilot, app)
    assert titles(repo) == ["Add sub", "initial"]


@whole_session
async def test_a_session_quit_while_the_model_writes_step_2_resumes_in_a_new_app(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    await quit_while_step_2_is_written(repo, scripted_server)
    asked_before = len(scripted_server.chat_requests)
    scripted_server.script(Reply(text=MUL_ON_SUB))

    app = resuming_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        shown = chat_text(app)
        # What happened before: the request, the plan, step 1's commit; then where it goes on.
        assert "add sub and mul" in shown and "Step 1 committed" in shown, shown
        assert "It stopped there (quit)" in shown
        assert "Resuming session" in shown and "step 2 (Add mul) next" in shown
        plan = "\n".join(visible_lines(app.plan_pane))
        assert "Add sub" in plan and "Add mul" in plan
        await pilot.press("a")
        await wait_for(pilot, lambda: titles(repo)[0] == "Add mul")
        await app.stop_work()
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
    new = scripted_server.chat_requests[asked_before:]
    assert len(new) == 1 and not is_plan_call(new[0])


@whole_session
async def test_resuming_a_finished_session_says_there_is_nothing_to_resume(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server, approval="auto")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: titles(repo)[0] == "add sub")
        await app.stop_work()  # quit at "what is still wrong?": resumable, it was not done

    app = resuming_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        # Resumable: it goes on at "what is still wrong?" (no step left, no model call).
        await wait_for(pilot, lambda: app.controller.reviewer.question == "still_wrong")
        assert "no steps left" in chat_text(app)
        app.controller.reviewer.answer("")  # done
        await wait_for(pilot, lambda: app.controller.reviewer.question == "verdict")
        app.controller.reviewer.answer(None)
        await wait_for(pilot, lambda: app.controller.finished_sessions == 1)

    app = resuming_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        text = "\n".join(str(w.render()) for w in app.screen.query("Static"))
        assert "nothing to resume" in text, text
    assert len(scripted_server.chat_requests) == 1


@whole_session
async def test_a_session_quit_during_a_review_shows_that_proposal_again_with_no_model_call(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    app = sub_and_mul_app(repo, scripted_server, MUL_ON_SUB)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))  # reading step 2 when the user quits
        await quit_with_ctrl_c_twice(pilot, app)
    asked = len(scripted_server.chat_requests)

    app = resuming_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        proposal = app.controller.reviewer.proposal
        assert proposal is not None and proposal.step.index == 2 and "def mul" in proposal.diff
        assert any("shown again" in note for note in proposal.notes)
        await pilot.press("a")
        await wait_for(pilot, lambda: titles(repo)[0] == "Add mul")
        await app.stop_work()
    assert len(scripted_server.chat_requests) == asked
