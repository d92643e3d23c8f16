"""The model server went away in the middle of a step: pause, the plan kept, until it answers.

Before, a step whose call could not reach the server (after the SDK's own retries) failed, the
session ended and the rest of the plan was lost; a server restarted a minute later was no help.
Now the session waits: every PROBE_EVERY seconds it asks whether anything answers at the base
URL, and then makes the same call again. The human may retry at once (`Session.retry_now`, the
TUI's `r`). Without a human at the keys (headless) the wait is bounded (`server_wait`), after
which the session stops and says which steps were not done. The bound counts from the call's
first pause: a server that answers the probe (GET /models) while its chat calls hang does not
reset it, and a call that finds the server gone STUCK_TIMES times in a row stops the session
with the reason, whoever waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_engineer.engine import events as ev
from tui_engineer.llm import ServerUnreachable

if TYPE_CHECKING:
    from tui_engineer.engine.runtime import Runtime, Stuck

PROBE_EVERY = 2.0  # seconds between "does the server answer?" checks
STUCK_TIMES = 3  # a call that finds the server gone this often in a row stops the session


class ServerPause:
    """A session's pause on a model server gone: how long it may last (`limit` seconds, None
    until the human retries or quits) and the human's retry. Answers the runtime's
    `on_unreachable`."""

    def __init__(
        self, rt: Runtime, limit: float | None, steps_left: Callable[[], list[str]]
    ) -> None:
        self.rt = rt
        self.limit = limit
        self._retry = asyncio.Event()
        self._steps_left = steps_left  # "2. Add mul", … : named when the session gives up
        rt.on_unreachable = self.server_gone

    def retry_now(self) -> None:
        """While paused on a model server that went away: make the call again now."""
        self._retry.set()

    async def server_gone(
        self, rt: Runtime, err: ServerUnreachable, call: tuple[str, int | None], stuck: Stuck
    ) -> None:
        """A call found the model server gone: wait (paused, plan kept) until it answers."""
        if rt is not self.rt:
            raise err  # the step prepared ahead (a copy of the runtime): made again in its turn
        try:
            if stuck.times >= STUCK_TIMES:
                raise ServerUnreachable(
                    f"The model server{_at(rt)} answers again each time, but {_where(call)} "
                    f"failed {stuck.times} times in a row, so the session stopped. The last "
                    f"time: {err}"
                )
            await wait_for_server(rt, call, self._retry, self.limit, stuck.since)
        except ServerUnreachable as gave_up:
            left = self._steps_left()
            not_done = f" Not done: {'; '.join(left)}." if left else ""
            raise ServerUnreachable(f"{gave_up}{not_done}") from None


async def wait_for_server(
    rt: Runtime,
    call: tuple[str, int | None],
    retry: asyncio.Event,
    limit: float | None,
    since: float | None = None,
) -> None:
    """Return when the call (`purpose`, `step`) should be made again: the server answers, or
    `retry` was set. Raises ServerUnreachable once `limit` seconds (None: no limit) passed
    since `since` (the call's first pause; None: now)."""
    purpose, step = call
    where = _where(call)
    # Not the start-up error's advice (set OPENAI_BASE_URL): it answered a moment ago, so the
    # address is right; it is restarting, overloaded, or its machine went away.
    gone = f"The model server{_at(rt)} stopped answering during {where}"
    message = f"{gone}."
    rt.emit(
        ev.ServerPaused(purpose=purpose, step=step, message=message, wait=limit, every=PROBE_EVERY)
    )
    started = time.monotonic()
    first = since or started
    retry.clear()
    while True:
        if limit is not None and time.monotonic() - first >= limit:
            raise ServerUnreachable(
                f"{gone} and did not answer again within {limit:g} s (server_wait), so the "
                "session stopped."
            )
        if await _woken(retry, PROBE_EVERY):
            by = "human"
            break
        if await _answers(rt):
            by = "server"
            break
    retry.clear()
    waited = time.monotonic() - started
    rt.emit(ev.ServerResumed(purpose=purpose, step=step, waited=waited, by=by))


def _where(call: tuple[str, int | None]) -> str:
    purpose, step = call
    return f"step {step}'s {purpose} call" if step is not None else f"the {purpose} call"


def _at(rt: Runtime) -> str:
    url = getattr(rt.model, "base_url", "")  # a replayed model has none
    return f" at {url}" if url else ""


async def _woken(event: asyncio.Event, seconds: float) -> bool:
    """Wait up to `seconds`; True if `event` was set meanwhile."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()


async def _answers(rt: Runtime) -> bool:
    answers = getattr(rt.model, "answers", None)  # a replayed model has no server
    return True if answers is None else bool(await answers())
