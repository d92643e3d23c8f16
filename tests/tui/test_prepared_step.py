"""The TUI with a real model's timing: the scripted server holds the step prepared ahead (or the
reply on screen) until the test releases it. An accept commits at once; the prepared step's
events never touch the reply on screen, its spinner or the token counter."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual import on
from textual.events import Key

from tests.conftest import git
from tests.engine_support import MUL_ON_SUB, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import hold_step_2, slow_hook, titles, wait_for_file
from tests.tui.app_support import (
    SIZE,
    SUB,
    finish_session,
    make_app,
    reviewing,
    sub_and_mul_app,
    wait_for,
    wait_for_screen,
)
from tui_engineer.engine import events as ev
from tui_engineer.engine.ahead.prepared import Held
from tui_engineer.tui import app as tui_app
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.bridge import EngineEvent
from tui_engineer.tui.engine_messages import EngineMessage, heard
from tui_engineer.tui.screens import RejectReasonScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_commits_at_once_while_the_next_steps_model_call_is_held(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_2(scripted_server)  # step 2, prepared while step 1 is reviewed
    app = make_app(repo, scripted_server.base_url, "add sub and mul", pipeline=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1))
            await gate.arrived()  # step 2's call is in flight, and stays there
            pressed = time.monotonic()
            await pilot.press("a")
            await wait_for(pilot, lambda: titles(repo)[0] == "Add sub", timeout=30)
            print(
                f"a -> commit on the branch, step 2's call held: {time.monotonic() - pressed:.2f} s"
            )
            await wait_for(pilot, lambda: app.status.phase.startswith("committed"))
            assert app.plan_pane.status_of(1) == "accepted"
            gate.open()
            await wait_for(pilot, reviewing(app, 2))
            await pilot.press("a")
            await finish_session(pilot, app)
    finally:
        gate.open()
    assert titles(repo) == ["Add mul", "Add sub", "initial"]


@whole_session
async def test_a_background_call_ending_while_the_reply_streams_leaves_that_reply_whole(
    make_repo, scripted_server
) -> None:
    """The step prepared ahead finishes a call (its exchange, its usage) while the reply on
    screen is held in the middle of its edit block: the chat shows one reply with the edit
    block kept out of it, the spinner stays, and the token counter never goes back."""
    repo = make_repo()
    gate = Gate()
    reply = "Adding `sub` next to `add`.\n\n" + SUB
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=reply, hold=gate, hold_after=8),  # held inside the edit block
    )
    app = make_app(repo, scripted_server.base_url, "add sub")
    shown: list[int] = []
    try:
        async with app.run_test(size=SIZE) as pilot:
            await gate.arrived()
            await wait_for(pilot, lambda: app.status.busy == "model: propose")
            await wait_for(pilot, lambda: "Adding" in app.chat.reply_text)
            shown.append(app.status.tokens)
            # What the pipeline's sink lets through of a prepared step's finished call.
            background = Held(lambda event: app.post_message(EngineEvent(event)))
            background(ev.ModelCallStarted(purpose="propose", step=2))
            background(ev.TokenStream(purpose="propose", text="calc.py\n```python\n"))
            background(ev.UsageUpdated(1, 1, None, None, None, estimated=True))
            background(
                ev.ModelExchange(
                    purpose="propose", step=2, messages=(), reply="x", finish_reason="stop",
                    prompt_tokens=1, completion_tokens=1, usd=None,
                )
            )  # fmt: skip
            background(ev.UsageUpdated(1, 1, None, None, None))
            await pilot.pause(0.1)
            shown.append(app.status.tokens)
            assert app.status.busy == "model: propose"  # the spinner goes on
            gate.open()
            await wait_for(pilot, reviewing(app, 1))
            shown.append(app.status.tokens)
            headers = [str(w.render()) for w in app.chat.query(".chat-who")]
            markdown = [m.source for m in app.chat.query("Markdown")]
    finally:
        gate.open()
    assert [h for h in headers if "propose" in h or h == "model"] == [
        "test-model — step 1 · propose"
    ], headers
    the_reply = [m for m in markdown if "Adding" in m]
    assert len(the_reply) == 1
    assert ">>>>>>>" not in the_reply[0] and "<<<<<<<" not in the_reply[0]  # edit block kept out
    assert not any(">>>>>>>" in m or "=======" in m for m in markdown)
    assert shown == sorted(shown), shown  # never backwards


@whole_session
async def test_quitting_during_a_slow_pre_commit_hook_waits_for_the_commit(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    reached, release = slow_hook(repo)
    gate = hold_step_2(scripted_server)
    # The accept's hook is the one waited on (the check before review cannot see `release`).
    app = make_app(
        repo, scripted_server.base_url, "add sub and mul", pipeline=True, commit_hook_check=False
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1))
            await pilot.press("a")
            await wait_for_file(reached)  # the commit's hook runs, step 2's call is held
            await pilot.press("ctrl+c", "ctrl+c")  # quit, and yes, quit
            await pilot.pause(0.2)
            assert app.return_code is None  # not gone before the branch stops moving
            release.touch()
            await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    finally:
        release.touch()
        gate.open()
    assert titles(repo) == ["Add sub", "initial"]
    assert git(repo, "status", "--porcelain") == ""
    assert "def sub" in (repo / "calc.py").read_text()


class PressesOnSight(TuiEngineerApp):
    """A user who presses `r` the instant step 1's proposal is drawn, as the tmux walk of the
    demo does (it reads the screen, then types)."""

    CSS_PATH = Path(tui_app.__file__).with_name("app.tcss")  # else looked for beside this file

    @on(heard(ev.ProposalReady))
    def _press_r(self, message: EngineMessage[ev.ProposalReady]) -> None:
        # The panes show the proposal by now; the app's own handler (which counts it) runs
        # after this one, and the key after both.
        if self.controller.proposals_seen == 0:
            self.post_message(Key("r", "r"))


@whole_session
async def test_a_key_pressed_as_soon_as_the_proposal_shows_is_not_lost(
    make_repo, scripted_server
) -> None:
    """The step prepared ahead is (re)started while step 1 goes to review. The review keys
    were dead from the diff being drawn until the engine asked (the preparation's git work
    lay between): `r` pressed in that moment did nothing, and CI's tmux walk of the demo
    waited 180 s for the reject dialog."""
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    app = make_app(
        repo, scripted_server.base_url, "add sub and mul", pipeline=True, app_class=PressesOnSight
    )
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1))
            await wait_for_screen(pilot, app, RejectReasonScreen)
            await pilot.press("escape")
            await pilot.press("q")
    finally:
        gate.open()


@whole_session
async def test_a_double_tapped_a_does_not_accept_the_step_that_just_appeared(
    make_repo, scripted_server
) -> None:
    """Step 2, prepared ahead, is under review a moment after step 1's accept. A second `a`
    pressed in that moment (a double tap, a key held down) committed step 2 unseen; it is now
    said, and `a` pressed once the proposal was on screen a while accepts it."""
    repo = make_repo()
    app = sub_and_mul_app(repo, scripted_server, MUL_ON_SUB, pipeline=True)
    app.diff.review_settle = 5.0  # the second tap falls within it even on a loaded machine
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "prepared")
        await pilot.press("a")
        await wait_for(
            pilot,
            lambda: (
                app.controller.reviewer.question == "review" and app.controller.proposals_seen == 2
            ),
        )
        await pilot.press("a")  # the second tap
        await pilot.pause(0.2)
        assert titles(repo) == ["Add sub", "initial"]
        assert app.controller.reviewer.question == "review"
        said = [str(note.message) for note in app._notifications]
        assert "Step 2 just appeared: look it over, then press a." in said
        await wait_for(pilot, reviewing(app, 2))  # on screen a while
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
