"""Cleanup that runs to its end when the session is cancelled, even more than once.

A quit cancels the session; more stop requests (Ctrl+C pressed again, Ctrl+C at `serve` that
also closes the tab, the terminal closing during a quit) cancel it again while its finally-blocks
remove shadow worktrees. Cut there, the removal goes on in a thread the process may not wait
for, and a shadow is left behind. These helpers hold such cancellations until the work is done
and raise them afterwards, so nothing is swallowed either."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def to_the_end(
    work: Awaitable[T],
    keep: Callable[[T], object] | None = None,
    held: Callable[[], object] | None = None,
) -> T:
    """Await `work` to its end, whatever cancels the caller meanwhile; then re-raise that.
    `keep` gets the result first, also when the caller was cancelled (something made, such as
    a shadow worktree, must be known to be removed). `held` is called once when a cancellation
    is first held back (to say why the stop waits)."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if task.done():
                raise  # the work itself was cancelled
            if not cancelled and held is not None:
                held()
            cancelled = True
    if keep is not None:
        keep(result)
    if cancelled:
        raise asyncio.CancelledError
    return result


async def settle(task: asyncio.Future[object]) -> None:
    """Wait until `task` is done (its own exception or cancellation is the caller's to read),
    whatever cancels the caller meanwhile; then re-raise that."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
