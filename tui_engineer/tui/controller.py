"""What the app's parts share about the session: its handle and the workers running it, the
question the engine has open (the reviewer), the chat waiting for its next model call, and
what the keys need to know (ready, paused, a test run going, the files the step changes).

It holds state, not screens: the panes keep what they show (tui/engine_messages.py), the
keys on them read it and answer the engine's review through it (`answer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.message import Message
from textual.worker import Worker

from tui_engineer.engine.inbox import Inbox
from tui_engineer.tui.bridge import TuiReviewer

if TYPE_CHECKING:  # the engine loads behind the first frame (startup.load_engine)
    from tui_engineer.engine.reviews.review import Decision
    from tui_engineer.engine.session import Session
    from tui_engineer.session.prepare import Prepared


class Answered(Message):
    """A key answered the review: the app says what happens next until the engine's next
    event (the status bar), and the footer's keys follow."""

    def __init__(self, decision: Decision) -> None:
        super().__init__()
        self.decision = decision


class SessionController:
    """One per app, for every session it runs in turn."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self.post = post
        self.reviewer = TuiReviewer(post)  # the engine's open question and its answer
        self.inbox: asyncio.Queue[str] = Inbox()  # the session hears each message
        self.prepared: Prepared | None = None  # checked at start-up, for the first request
        self.session: Session | None = None
        self.engine: Worker[None] | None = None
        self.tests: Worker[object] | None = None  # a test run asked for with `t`
        self.ready = False  # start-up checks passed
        self.proposals_seen = 0  # tests and scripts wait on these counters
        self.finished_sessions = 0
        self.stopped_by = ""  # the error that ended the session, for its verdict dialog
        self.server_paused = False  # the model server went away mid-step (ServerPaused)
        self.tests_running = False
        self.changes: set[str] = set()  # the files the step under way changes

    @property
    def working(self) -> bool:
        """A session runs (the engine's worker)."""
        return self.engine is not None and self.engine.is_running

    @property
    def reviewing(self) -> bool:
        """The engine waits for a decision on a proposal."""
        return self.reviewer.question == "review"

    def answer(self, decision: Decision) -> bool:
        """The one way a key answers the engine's review; False when no review is open."""
        if not self.reviewing:
            return False
        self.reviewer.answer(decision)
        self.post(Answered(decision))
        return True

    def got_session(self, session: Session, approval: str) -> None:
        # A human is at the keys: a model server that goes away pauses the session until it
        # answers again, `r` retries or the human quits, however long that takes.
        session.server_wait = None
        session.approval = approval or session.approval
        self.session = session

    def drop_undelivered(self) -> None:
        """Chat the session never sent stays with it (its record has it, for a resume): the
        next session is a new request, and must not get it with its first call."""
        while not self.inbox.empty():
            self.inbox.get_nowait()
