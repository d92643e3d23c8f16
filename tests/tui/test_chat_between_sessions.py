"""Chat typed while the model works goes with its next call: a session that ends before that
call keeps it (its record has it, for a resume); the next session, a new request, never gets
it. Pilot over the real engine, the scripted model over HTTP holding the reply."""

from __future__ import annotations

import pytest

from tests.engine_support import MUL, SUB
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    asked,
    chat_text,
    reviewing,
    send_chat,
    session_ended,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import VerdictScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_message_queued_in_one_session_is_not_sent_with_the_next(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = Gate()
    app = add_sub_app(repo, scripted_server, Reply(text=SUB, hold=gate), Reply(text=MUL))
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()  # the model writes step 1
        await send_chat(pilot, "use snake case")  # queued for the next model call: there is none
        gate.open()
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, asked(app, "still_wrong"))
        await pilot.press("enter")  # done
        await wait_for_screen(pilot, app, VerdictScreen)
        await pilot.click("#skip")
        await wait_for(pilot, session_ended(app))
        assert "not sent: the session ended before the model's next call" in chat_text(app)
        await send_chat(pilot, "add mul")  # a new session
        await wait_for(pilot, lambda: len(scripted_server.chat_requests) == 2)
        second = scripted_server.chat_requests[1]
        assert "add mul" in str(second.messages)
        assert "snake case" not in str(second.messages)
        await app.stop_work()
