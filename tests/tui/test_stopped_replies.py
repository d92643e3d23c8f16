"""A reply stopped early because it was not what was asked (issue 21 §3) reads in the chat as
what it is, once, with the numbers the session's last sentence gives: not as a failed call."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from tests.engine_support import plan_reply
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, chat_text, make_app, wait_for, wait_for_screen
from tui_engineer.tui.screens import VerdictScreen

# Prose that never loops and never edits or plans: stopped at its bound.
MUSING = "\n".join(
    f"Thought {i}: a sub function might be named minus_{i} instead." for i in range(900)
)


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_stopped_plan_reply_says_why_with_the_tokens_it_counted(
    make_repo, scripted_server
) -> None:
    scripted_server.script(Reply(text=MUSING), Reply(text=MUSING))
    app = make_app(make_repo(), scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "are unusable" in chat_text(app))
        chat = chat_text(app)
        assert "failed after" not in chat  # stopped on purpose, not a failed call
        # Each stop said once, when it happened (the second copied the first back: an echo).
        assert chat.count("The reply from test-model was not a plan") == 2
        first = chat.split("was not a plan: ")[1].split(" tokens")[0]
        assert f"it wrote {first} and then" in " ".join(chat.split())  # the same count
        await app.stop_work()


@whole_session
async def test_a_stopped_edit_reply_is_said_once(make_repo, scripted_server) -> None:
    scripted_server.script(
        Reply(text=plan_reply("Add sub")), Reply(text=MUSING), Reply(text=MUSING)
    )
    app = make_app(make_repo(), scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "asked twice for an edit" in chat_text(app))
        chat = chat_text(app)
        assert "failed after" not in chat
        # The first said by its refusal, the second by the session's end, with the same count.
        assert chat.count("was not an edit: 40") == 1 and "Edit refused (step 1)" in chat
        first = chat.split("was not an edit: ")[1].split(" tokens")[0]
        assert f"asked twice for an edit, it wrote {first} and then" in " ".join(chat.split())
        await app.stop_work()


@whole_session
async def test_the_verdict_dialog_says_why_the_session_stopped(make_repo, scripted_server) -> None:
    """The dialog opens over the chat, where the session's one sentence on why it ended is: so
    the dialog says it too (it was hidden under the dialog, and its toast gone after 15 s)."""
    scripted_server.script(Reply(text=MUSING), Reply(text=MUSING))
    app = make_app(make_repo(), scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, VerdictScreen)
        said = " ".join(str(app.screen.query_one("#dialog-body", Static).render()).split())
        assert said.startswith("Stopped: the replies of test-model are unusable: asked twice")
        await app.stop_work()
