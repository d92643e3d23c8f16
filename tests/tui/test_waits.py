"""Waits a user can read (issue 37, part 3): a key pressed while the model works says why it
does nothing now."""

from __future__ import annotations

import pytest
from textual.events import Key

from tests.engine_support import MUL_ON_SUB, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import hold_step_1, hold_step_2, titles
from tests.tui.app_support import (
    SIZE,
    chat_text,
    make_app,
    reviewing,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import QuitScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_t_while_the_model_plans_says_why_the_tests_do_not_run_now(
    make_repo, scripted_server
) -> None:
    """Issue 37, part 3: `t` during the plan call did nothing and said nothing."""
    gate = Gate()
    scripted_server.script(Reply(text=plan_reply("Fix add"), hold=gate))
    app = make_app(make_repo(), scripted_server.base_url, "fix add")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        await pilot.press("t")
        await pilot.pause()
        said = [str(note.message) for note in app._notifications]
        gate.open()
        assert any("The model is working" in s for s in said), said


@whole_session
async def test_the_status_bar_says_what_a_held_call_waits_for(make_repo, scripted_server) -> None:
    """Issue 37, part 3: while step 1's call waits for its first token, the status bar says
    which step, what it waits for, and (after 2 s) for how long."""
    gate = hold_step_1(scripted_server)
    app = make_app(make_repo(), scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        bar = app.status
        await wait_for(pilot, lambda: bar.detail == "step 1 · waiting for the model: propose")
        assert "step 1 · waiting for the model: propose" in str(bar.render())
        bar.deterministic = False  # the pictures' bar shows no clock: this one does
        assert bar.busy_since is not None
        bar.busy_since -= 14.2  # as if it had waited 14 s
        assert bar.busy_text() == "step 1 · waiting for the model: propose · 14 s"
        gate.open()
        await wait_for(pilot, lambda: bar.detail != "step 1 · waiting for the model: propose")
        await app.stop_work()


@whole_session
async def test_a_server_drop_during_the_step_in_progress_names_that_step_not_a_preparation(
    make_repo, scripted_server
) -> None:
    """Issue 37, part 3: step 2, prepared ahead, was already the step in progress when the
    server dropped; the chat said "Step 2 could not be prepared ahead (… Set OPENAI_BASE_URL
    …)". It says what happened to the step in progress."""
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    app = make_app(repo, scripted_server.base_url, "add sub and mul", pipeline=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await gate.arrived()  # step 2's call, made while step 1 is reviewed, is in flight
        await pilot.press("a")
        await wait_for(pilot, lambda: titles(repo)[0] == "Add sub")
        scripted_server.stop()  # the model server dies while step 2 (now in progress) waits
        await wait_for(pilot, lambda: "paused" in app.status.phase)
        said = chat_text(app)
        assert "could not be prepared ahead" not in said, said
        assert "OPENAI_BASE_URL" not in said, said
        assert "Step 2's model call" in said and "asked for again" in said, said
        scripted_server.script(Reply(text=MUL_ON_SUB))
        scripted_server.start()
        await pilot.press("r")
        await wait_for(pilot, reviewing(app, 2))
        await app.stop_work()


@whole_session
@pytest.mark.parametrize("first", ["q", "ctrl+c"])
async def test_q_pressed_again_in_the_quit_dialog_quits(make_repo, scripted_server, first) -> None:
    """Issue 37, part 3: docs/tui.md says the quit key pressed again quits; `q` did not."""
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        await pilot.press(first)
        await wait_for_screen(pilot, app, QuitScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert titles(repo) == ["initial"]


@whole_session
async def test_a_then_ctrl_c_twice_at_once_keeps_the_accept(make_repo, scripted_server) -> None:
    """Issue 37, part 3: `a`, then Ctrl+C Ctrl+C within 10 ms, dropped the `a`: the accept is
    kept (committed) and the app quits; step 2's call is in flight meanwhile."""
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    app = make_app(repo, scripted_server.base_url, "add sub and mul", pipeline=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await gate.arrived()
        # As a terminal sends them within 10 ms: posted at once, none handled before the next
        # (Pilot.press waits for each key's handling).
        for key, char in (("a", "a"), ("ctrl+c", None), ("ctrl+c", None)):
            app.post_message(Key(key, char))
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert titles(repo) == ["Add sub", "initial"]
