"""The TUI while a real model takes its time (replies held at a Gate until the test opens it):
undo mid-plan and in the final dialog, Ctrl+C twice, and a step planned from the human's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import DIV, MUL, SUB, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import hold_step_1, hold_step_2, titles
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    asked,
    chat_text,
    make_app,
    reviewing,
    sub_and_mul_app,
    type_text,
    visible_lines,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import ConfirmUndoScreen, QuitScreen, StillWrongScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_ctrl_c_twice_quits_while_the_model_thinks(make_repo, scripted_server) -> None:
    repo = make_repo()
    gate = Gate()
    app = add_sub_app(repo, scripted_server, Reply(text=SUB, hold=gate))
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        await pilot.press("ctrl+c")
        await wait_for_screen(pilot, app, QuitScreen)
        await pilot.press("ctrl+c")  # a user who means it presses it again
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert titles(repo) == ["initial"]
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_steps_planned_from_what_is_still_wrong_show_the_users_words(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    app = add_sub_app(
        repo, scripted_server, Reply(text=SUB), Reply(text=plan_reply("Add div")), Reply(text=DIV)
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, asked(app, "still_wrong"))
        await type_text(pilot, "no way to divide")
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        await pilot.pause()
        shown = "\n".join(visible_lines(app.plan_pane))
        assert "no way to divide" in shown, shown
        assert "2. Add div" in shown and "1. add sub" in shown
        await app.stop_work()


def footer_keys(app) -> set[str]:
    """The keys the footer offers now."""
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


@whole_session
async def test_undo_while_the_next_step_is_reviewed_and_not_offered_while_it_is_made(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    # Step 2 takes its time; proposed again after the undo.
    gate = hold_step_2(scripted_server, MUL, Reply(text=MUL))
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await gate.arrived()
        await pilot.pause()
        assert titles(repo) == ["Add sub", "initial"]
        assert "u" not in footer_keys(app)  # the model is making step 2: nothing to undo it in
        await pilot.press("u")
        await pilot.pause()
        assert titles(repo) == ["Add sub", "initial"]
        gate.open()
        await wait_for(pilot, reviewing(app, 2))
        assert "u" in footer_keys(app)
        await pilot.press("u")  # step 2's proposal is built on step 1: dropped, made again
        await wait_for(pilot, lambda: titles(repo) == ["initial"])
        await wait_for(pilot, lambda: app.plan_pane.status_of(1) == "undone")
        await wait_for(pilot, reviewing(app, 3))
        assert "def sub" not in (repo / "calc.py").read_text()
        await pilot.press("a")
        await wait_for(pilot, asked(app, "still_wrong"))
        await app.stop_work()
    assert titles(repo) == ["Add mul", "initial"]
    assert "def sub" not in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""


async def accept_both_and_undo_the_last_at_the_end(pilot, app, repo: Path) -> None:
    """Steps 1 and 2 accepted, then Undo in the final dialog ("What is still wrong?")."""
    await wait_for(pilot, reviewing(app, 1))
    await pilot.press("a")
    await wait_for(pilot, reviewing(app, 2))
    await pilot.press("a")
    await wait_for_screen(pilot, app, StillWrongScreen)
    await pilot.click("#undo")
    await wait_for(pilot, lambda: titles(repo) == ["Add sub", "initial"])
    # The commit is gone from git before the app heard so (StepUndone): the next undo is
    # offered for what the Plan pane then shows as the last accepted step.
    await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "undone")


@whole_session
async def test_after_an_undo_in_the_final_dialog_typing_goes_to_the_box_and_undo_asks_again(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = Gate()
    app = sub_and_mul_app(
        repo, scripted_server, MUL, Reply(text=plan_reply("Add mul again"), hold=gate)
    )
    async with app.run_test(size=SIZE) as pilot:
        await accept_both_and_undo_the_last_at_the_end(pilot, app, repo)
        await pilot.pause()
        # The user goes on typing what is wrong, and sends it: the letters reach the box, and
        # Enter does not undo a second step.
        await type_text(pilot, "mul is missing")
        await pilot.press("enter")
        await gate.arrived()
        assert titles(repo) == ["Add sub", "initial"]
        assert "mul is missing" in scripted_server.chat_requests[-1].messages[-1]["content"]
        await app.stop_work()


@whole_session
async def test_a_second_undo_in_the_final_dialog_asks_first(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = sub_and_mul_app(repo, scripted_server, MUL)
    async with app.run_test(size=SIZE) as pilot:
        await accept_both_and_undo_the_last_at_the_end(pilot, app, repo)
        await pilot.click("#undo")
        await wait_for_screen(pilot, app, ConfirmUndoScreen)
        assert "Add sub" in str(app.screen.query_one("#dialog-body").render())
        await pilot.click("#keep")
        await wait_for_screen(pilot, app, StillWrongScreen)
        assert titles(repo) == ["Add sub", "initial"]
        assert app.focused is app.screen.query_one("#still-wrong")
        await pilot.click("#undo")
        await wait_for_screen(pilot, app, ConfirmUndoScreen)
        await pilot.click("#undo")
        await wait_for(pilot, lambda: titles(repo) == ["initial"])
        await app.stop_work()


@whole_session
async def test_a_server_dropped_mid_step_pauses_and_r_retries_once_it_is_back(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        scripted_server.stop()  # the model server dies while step 1's reply is on its way
        await wait_for(pilot, lambda: "paused" in app.status.phase)
        await pilot.pause()
        assert "r" in footer_keys(app)
        assert (
            app.controller.engine is not None and app.controller.engine.is_running
        )  # the session goes on
        assert app.plan_pane.status_of(2) == "pending"  # the plan is kept
        said = chat_text(app)
        assert "stopped answering during step 1's propose call" in said, said
        assert "--base-url" not in said  # it answered a moment ago: the address is right
        assert "Press r to retry now" in said
        scripted_server.script(Reply(text=SUB), Reply(text=MUL))
        scripted_server.start()  # restarted on the same port
        await pilot.press("r")
        await wait_for(pilot, reviewing(app, 1))
        assert "r" in footer_keys(app)  # now Reject again
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        await pilot.press("a")
        await wait_for(pilot, asked(app, "still_wrong"))
        await app.stop_work()
    assert titles(repo) == ["Add mul", "Add sub", "initial"]


@whole_session
async def test_an_undo_refused_during_a_review_says_why_and_the_review_goes_on(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    app = sub_and_mul_app(repo, scripted_server, MUL)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        (repo / "calc.py").write_text((repo / "calc.py").read_text() + "# mine\n")
        await pilot.press("u")
        await wait_for(pilot, lambda: "undo refused" in app.status.phase)
        await wait_for(pilot, reviewing(app, 2))
        assert app.controller.proposals_seen == 2 and app.plan_pane.status_of(1) == "accepted"
        assert "calc.py" in chat_text(app)  # why: the file changed since the step
        assert titles(repo) == ["Add sub", "initial"]
        await app.stop_work()
    assert "# mine" in (repo / "calc.py").read_text()
