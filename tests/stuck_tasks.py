"""A test whose event loop waits on something that never comes fails in minutes, saying where.

pytest-timeout ends a hung test after 20 minutes, but on an event loop waiting for a future that
nothing will resolve it can show only the loop's `select()`: every coroutine's place is lost,
and CI's log says nothing about which await it was. Here a timer thread, `STUCK_AFTER` seconds
into a test, asks the test's running event loop (found among live objects: it runs in the main
thread) to print the stack of every task, then cancels them, so the test fails with the
traceback of the await it was stuck in and the stacks of what it waited for."""

from __future__ import annotations

import asyncio
import gc
import io
import os
import sys
import threading
from collections.abc import Iterator

import pytest

# Seconds: the slowest test takes ~100 s alone, ~250 s on a loaded machine. The variable is
# for this module's own test.
STUCK_AFTER = float(os.environ.get("TUI_TEST_STUCK_AFTER", "600"))


def _running_loops() -> list[asyncio.AbstractEventLoop]:
    return [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, asyncio.AbstractEventLoop) and obj.is_running()
    ]


def _dump_and_cancel(loop: asyncio.AbstractEventLoop, name: str) -> None:
    """On the loop's own thread: every task's stack to stderr (pytest shows it), then cancel."""
    out = io.StringIO()
    tasks = asyncio.all_tasks(loop)
    out.write(f"\n{name} still waiting after {STUCK_AFTER:.0f} s; its {len(tasks)} tasks:\n")
    for task in tasks:
        out.write(f"--- {task.get_name()}\n")
        out.writelines(f"  {line}\n" for line in _awaiting(task.get_coro()))
    sys.stderr.write(out.getvalue())
    for task in tasks:
        task.cancel()


def _awaiting(coro: object) -> Iterator[str]:
    """Where a task is, down the chain of what each coroutine awaits (a task's own stack
    shows only its outermost frame while it is suspended)."""
    for _ in range(50):
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is None:
            if coro is not None:
                yield repr(coro)
            return
        yield f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)


def _on_stuck(name: str) -> None:
    for loop in _running_loops():
        loop.call_soon_threadsafe(_dump_and_cancel, loop, name)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    timer = threading.Timer(STUCK_AFTER, _on_stuck, args=(item.nodeid,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
