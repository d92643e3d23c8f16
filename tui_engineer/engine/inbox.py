"""The human's chat messages on their way to the model.

A message is delivered with the model's next call (engine/runtime.py `take_feedback`). The
session listens as each is sent: one that concerns the step prepared ahead
(engine/reviews/chat_target.py)
goes to that step at once, which is prepared again with it (engine/ahead/pipeline.py), so that the
accept of the step under review never waits for a fresh call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# Sees a message as it is sent; True when it took it (it is then not queued here).
Listener = Callable[[str], bool]


class Inbox(asyncio.Queue[str]):
    """A queue of chat messages whose listener (the running session's) sees each as it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.listener: Listener | None = None

    def put_nowait(self, item: str) -> None:
        if self.listener is not None and self.listener(item):
            return
        super().put_nowait(item)

    def put_back(self, item: str) -> None:
        """Queued again as it is (a message read, not taken; or one a dropped step had): the
        listener does not see it a second time."""
        super().put_nowait(item)


def put_back(inbox: asyncio.Queue[str], text: str) -> None:
    """`text` queued again without its listener's seeing it (a plain queue has none)."""
    if isinstance(inbox, Inbox):
        inbox.put_back(text)
    else:
        inbox.put_nowait(text)
