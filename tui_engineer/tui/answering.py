"""The one way a key answers the engine's review: the decision goes to the open question, the
status bar says what happens next until the engine's next event, and the footer's keys follow.
The review keys (review_keys.py) and the pair keys (pair_keys.py) both answer through this, so
neither calls the other."""

from __future__ import annotations

from tui_engineer.engine.reviews.review import Decision
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.panes.status import StatusBar

AFTER_DECISION = {
    # Said "accepted" once the engine has the decision on disk (panes/status.py, DecisionMade).
    "accept": "accepting: keeping your decision",
    "reject": "rejected: the model writes a new proposal",
    "skip": "skipped",
    "undo": "undoing the last accepted step",
    "edited": "edited by you: testing it again",
}


class Answering:
    """A base of the key mixins of `TuiEngineerApp` (before `App`)."""

    controller: SessionController
    status: StatusBar

    def reviewing_now(self) -> bool:
        """A proposal is under review and no dialog is open over it."""
        screens = getattr(self, "screen_stack", [])
        return self.controller.reviewing and len(screens) == 1

    def answer(self, decision: Decision) -> None:
        if self.controller.reviewing:
            self.controller.reviewer.answer(decision)
            # Until the engine's next event the status must not keep saying "review".
            self.status.phase = AFTER_DECISION.get(decision.kind, self.status.phase)
            self.refresh_bindings()  # type: ignore[attr-defined]
