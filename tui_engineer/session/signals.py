"""Stopping cleanly on SIGTERM (a CI timeout, `kill`) and SIGHUP (a closed terminal).

Their default action ends the process at once, leaving the shadow and any container behind.
Here they cancel the session's task instead, so every `finally` runs and the record says
the session was stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def add_stop_handlers(handler: Callable[[signal.Signals], None]) -> Callable[[], None]:
    """SIGTERM/SIGHUP call `handler` on the running loop instead of killing the process.
    Returns the function that puts the defaults back."""
    loop = asyncio.get_running_loop()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, handler, sig)

    def remove() -> None:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)

    return remove


def detach_from_terminal(*, terminals_only: bool = False) -> None:
    """After SIGHUP the terminal is gone: stdin, stdout and stderr point at /dev/null from now
    on, so the last writes (a UI restoring the terminal, a closing line) neither fail nor block
    the exit. Without this a closed window left the app running, stuck writing to it.

    `terminals_only` keeps the ones redirected to a file or a pipe (`run ... > log`): they
    are still there, and the last lines (how the run ended) belong in them."""
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            if not terminals_only or _is_terminal(fd):
                os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def _is_terminal(fd: int) -> bool:
    # Not os.isatty: on a hung-up terminal it fails (EIO) and says False. A character device
    # is a terminal (or /dev/null already); files and pipes are not.
    try:
        return stat.S_ISCHR(os.fstat(fd).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def signals_call(handler: Callable[[signal.Signals], None]) -> Iterator[None]:
    remove = add_stop_handlers(handler)
    try:
        yield
    finally:
        remove()


async def run_stoppable(work: Awaitable[T]) -> tuple[T | None, signal.Signals | None]:
    """Run `work`; a stop signal cancels it. Returns (result, None) or (None, the signal)."""
    task = asyncio.ensure_future(work)
    received: list[signal.Signals] = []

    def stop(sig: signal.Signals) -> None:
        if sig == signal.SIGHUP:  # the terminal closed: the progress lines have nowhere to go
            detach_from_terminal(terminals_only=True)
        received.append(sig)
        task.cancel()

    with signals_call(stop):
        try:
            return await task, None
        except asyncio.CancelledError:
            if not received:
                raise
            return None, received[0]
