"""Chat in the TUI while step 1 is reviewed and step 2 is prepared ahead (issue 37 §1), with a
real model's timing: the scripted server holds step 3's reply (prepared while step 2 is reviewed)
at a gate. A message about step 1 never makes the accept wait for a fresh call for step 2; one
that names step 2 prepares it again as it is sent, and the Plan pane says so."""

from __future__ import annotations

import time

import pytest

from tests.engine_support import DIV, MUL_ON_SUB, SUB, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import titles
from tests.tui.app_support import (
    SIZE,
    chat_text,
    diff_text,
    make_app,
    reviewing,
    send_chat,
    visible_lines,
    wait_for,
)

PLAN = plan_reply("Add sub", "Add mul", "Add div")


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_message_about_the_step_under_review_does_not_make_the_accept_wait(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    step_3 = Gate()
    scripted_server.script(
        Reply(text=PLAN), Reply(text=SUB), Reply(text=MUL_ON_SUB), Reply(text=DIV, hold=step_3)
    )
    app = make_app(repo, scripted_server.base_url, "add sub, mul and div", pipeline=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "prepared")
        await send_chat(pilot, "please give sub a docstring")
        await pilot.pause()
        assert app.plan_pane.status_of(2) == "prepared"  # not touched
        app.diff.focus()
        pressed = time.monotonic()
        await pilot.press("a")
        # Step 2's prepared proposal is reviewed: no call for it at the accept (the model would
        # get step 3's held reply, and step 2 would never come).
        await wait_for(pilot, reviewing(app, 2), timeout=30)
        waited = time.monotonic() - pressed
        print(f"a -> step 2's review, a message about step 1 sent: {waited:.2f} s")
        await step_3.arrived()
        assert titles(repo) == ["Add sub", "initial"]
        assert len(scripted_server.chat_requests) == 4  # plan, step 1, step 2, step 3
        assert "def mul(a, b):" in diff_text(app)
        step_3.open()
        await app.stop_work()


@whole_session
async def test_a_message_naming_the_prepared_step_prepares_it_again_and_the_plan_says_so(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    again = Gate()
    scripted_server.script(
        Reply(text=PLAN), Reply(text=SUB), Reply(text=MUL_ON_SUB),
        Reply(text=MUL_ON_SUB, hold=again), Reply(text=DIV),
    )  # fmt: skip
    app = make_app(repo, scripted_server.base_url, "add sub, mul and div", pipeline=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "prepared")
        await send_chat(pilot, "in step 2 keep mul on one line")
        await again.arrived()  # asked again now, while step 1 is still under review
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "preparing again")
        shown = "\n".join(visible_lines(app.plan_pane))
        assert "↻" in shown, shown
        assert "prepared again" in chat_text(app)
        assert "keep mul on one line" in str(scripted_server.chat_requests[3].messages)
        again.open()
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "prepared")
        app.diff.focus()
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2), timeout=30)
        assert "def mul(a, b):" in diff_text(app)
        # Step 3's call, prepared while step 2 is reviewed: the fifth, none more for step 2.
        await wait_for(pilot, lambda: len(scripted_server.chat_requests) == 5)
        assert titles(repo) == ["Add sub", "initial"]
        await app.stop_work()
