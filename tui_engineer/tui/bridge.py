"""Where the engine meets Textual: engine events become messages, and the engine's questions
(the Reviewer protocol) become screens or key presses whose answers resolve a future.

The engine runs as a worker in the app's own event loop, so both directions stay on one thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Literal

from textual.message import Message

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision, Proposal, Verdict

Question = Literal["review", "still_wrong", "verdict"]


class EngineEvent(Message):
    """One engine event, delivered to the app in the order the engine emitted them."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class Asked(Message):
    """The engine waits for the human: `question` says what about; `proposal` is set for reviews.
    The answer's future travels with it: whoever shows the question answers it (`answer`)."""

    def __init__(
        self,
        question: Question,
        future: asyncio.Future[object],
        proposal: Proposal | None = None,
    ) -> None:
        super().__init__()
        self.question = question
        self.future = future
        self.proposal = proposal

    def answer(self, value: object) -> None:
        """Resolve the question, unless it was answered already (a key, then a dialog)."""
        if not self.future.done():
            self.future.set_result(value)


class TuiReviewer:
    """The engine's Reviewer for the TUI. Each question posts `Asked` and waits until the app
    calls `answer()` (from a key binding or a dialog's result)."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._pending: asyncio.Future[object] | None = None
        self.question: Question | None = None
        self.proposal: Proposal | None = None
        self.asked_at = 0.0  # when the open question was asked (time.monotonic)

    @property
    def waiting(self) -> bool:
        return self._pending is not None and not self._pending.done()

    def answer(self, value: object) -> bool:
        """Resolve the open question; False when nothing is being asked (a stale key press)."""
        if not self.waiting:
            return False
        assert self._pending is not None
        self._pending.set_result(value)
        return True

    async def _ask(self, question: Question, proposal: Proposal | None = None) -> object:
        self._pending = asyncio.get_running_loop().create_future()
        self.question, self.proposal = question, proposal
        self.asked_at = time.monotonic()
        self._post(Asked(question, self._pending, proposal))
        try:
            return await self._pending
        finally:
            self.question, self.proposal, self._pending = None, None, None

    async def review(self, proposal: Proposal) -> Decision:
        result = await self._ask("review", proposal)
        assert isinstance(result, Decision)
        return result

    async def still_wrong(self) -> str | None:
        result = await self._ask("still_wrong")
        return result if isinstance(result, str) else None

    async def verdict(self) -> Verdict | None:
        result = await self._ask("verdict")
        return result if isinstance(result, Verdict) else None


def event_poster(post: Callable[[Message], object]) -> ev.EventSink:
    """The engine's event sink: each event becomes an `EngineEvent` message."""

    def sink(event: ev.Event) -> None:
        post(EngineEvent(event))

    return sink
