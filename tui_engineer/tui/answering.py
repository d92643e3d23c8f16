"""What a key that answers the engine's review shares with the others: whether a review is
open to answer now, what the status bar says once it is answered (until the engine's next
event), and `Say`, a line a pane's key has for the chat. The keys answer through the
controller (`SessionController.answer`), never through each other."""

from __future__ import annotations

from textual.app import App
from textual.message import Message

from tui_engineer.tui.controller import SessionController

AFTER_DECISION = {
    # Said "accepted" once the engine has the decision on disk (panes/status.py, DecisionMade).
    "accept": "accepting: keeping your decision",
    "reject": "rejected: the model writes a new proposal",
    "skip": "skipped",
    "undo": "undoing the last accepted step",
    "edited": "edited by you: testing it again",
    "retest": "testing it again",
}


def reviewing_now(controller: SessionController, app: App[object]) -> bool:
    """A proposal is under review and no dialog is open over it."""
    return controller.reviewing and len(app.screen_stack) == 1


class Say(Message):
    """A line for the chat from a pane's key (a comment made, edits taken in): the session's
    screen writes it in the Chat pane."""

    def __init__(self, text: str, *, error: bool = False) -> None:
        super().__init__()
        self.text = text
        self.error = error
