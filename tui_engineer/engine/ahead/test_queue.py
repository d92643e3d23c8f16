"""One queue for the test runs of a session and of every step prepared beside it
(engine/ahead/pipeline.py): the machine's cores are shared out, so two suites never fight over two
cores and each takes longer than one after the other. The step under review (the human waits for
it) goes first, then the step reviewed next, then the others; in each rank, first come, first
served."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


def runs_at_once(cores: int | None = None) -> int:
    """How many test runs share the machine: one per two cores (a suite uses more than one:
    pytest itself, the interpreter's start-up, the files it reads), at least one."""
    return max(1, (cores or os.cpu_count() or 1) // 2)


class TestQueue:
    """At most `size` test runs at a time; the waiting run of the lowest rank is let in first."""

    __test__ = False  # not a pytest class, whatever its name

    def __init__(self, size: int | None = None) -> None:
        self.size = size or runs_at_once()
        self.running = 0
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    @asynccontextmanager
    async def turn(self, *, rank: int = 0) -> AsyncIterator[None]:
        """Hold a place while the run goes on. `rank`: 0 the step under review's, 1 the step
        reviewed next, 2 another step prepared ahead."""
        if self.running >= self.size:
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            entry = (rank, next(self._order), ready)
            self._waiting.append(entry)
            self._waiting.sort(key=lambda e: e[:2])
            try:
                await ready
            except BaseException:
                if entry in self._waiting:
                    self._waiting.remove(entry)
                elif ready.done() and not ready.cancelled():
                    self._release()  # it was let in as it was cancelled: pass the place on
                raise
        else:
            self.running += 1
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        """A run ended: the first waiting one takes its place (the count stays)."""
        while self._waiting:
            _, _, ready = self._waiting.pop(0)
            if not ready.done():
                ready.set_result(None)
                return
        self.running -= 1
