"""Running a command in the warm container: output streamed line by line, a timeout enforced
inside the container (GNU `timeout` kills the command's process group) and, as a backstop, on
the host (every process of the run is killed and the stream closed)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from docker.utils.socket import frames_iter

# The verify layer's streaming pieces: same line splitting and output cap as the local sandbox.
from tui_engineer.verify.test_process import _CappedBuffer, _LineSplitter

OutputCallback = Callable[[str], None]
KILL_AFTER_SECONDS = 2  # `timeout` sends SIGTERM, then SIGKILL this long after
HOST_GRACE_SECONDS = 10.0  # the host steps in when the container's own timeout did not end it
TIMEOUT_EXIT_CODES = (124, 137)  # timeout's own code; 137 when --kill-after had to SIGKILL


@dataclass
class ExecResult:
    exit_code: int | None  # None when stopped by the timeout
    timed_out: bool
    duration: float
    output: str
    truncated: bool


def timed(argv: list[str], timeout: float | None) -> list[str]:
    if timeout is None:
        return argv
    return ["timeout", f"--kill-after={KILL_AFTER_SECONDS}", f"{timeout:g}", *argv]


async def exec_quiet(
    api: Any,
    container_id: str,
    script: str,
    *,
    user: str = "root",
    timeout: float = 60,
    wrap: bool = True,
) -> tuple[int | None, str]:
    """A short helper command: (exit code, output). `wrap=False` leaves out GNU timeout (for
    scripts that kill processes: they would kill their own `timeout` parent)."""
    result = await exec_stream(
        api, container_id, ["sh", "-c", script], user=user, timeout=timeout, wrap=wrap
    )
    return result.exit_code, result.output


async def exec_stream(
    api: Any,
    container_id: str,
    argv: list[str],
    *,
    user: str,
    timeout: float | None,
    env: Mapping[str, str] | None = None,
    workdir: str = "/",
    on_output: OutputCallback | None = None,
    on_overdue: Callable[[], Awaitable[None]] | None = None,
    output_cap_bytes: int = 2_000_000,
    wrap: bool = True,
) -> ExecResult:
    """Run `argv` in the container. With `timeout`, it runs under GNU timeout; if the run is
    still going HOST_GRACE_SECONDS later, `on_overdue` (which should kill the run's processes) is
    awaited and the stream closed. Cancelling the awaiting task does the same."""
    started = time.monotonic()
    exec_id = await asyncio.to_thread(
        api.exec_create,
        container_id,
        timed(argv, timeout) if wrap else argv,
        user=user,
        environment=dict(env or {}),
        workdir=workdir,
        stdout=True,
        stderr=True,
    )
    sock = await asyncio.to_thread(api.exec_start, exec_id["Id"], socket=True)
    # A quiet test may print nothing for minutes: the client's read timeout must not end it.
    with contextlib.suppress(Exception):
        api._disable_socket_timeout(sock)
    buffer = _CappedBuffer(output_cap_bytes)
    lines = _LineSplitter(on_output)
    queue: asyncio.Queue[bytes | None] = asyncio.Queue()
    loop = asyncio.get_running_loop()
    pump = loop.run_in_executor(None, _pump, sock, loop, queue)
    deadline = None if timeout is None else started + timeout + HOST_GRACE_SECONDS
    overdue = False
    try:
        overdue = await _consume(queue, buffer, lines, deadline)
    except BaseException:
        await _stop(sock, on_overdue)
        raise
    if overdue:
        await _stop(sock, on_overdue)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(pump, 5)
    lines.feed(b"", final=True)
    info = await asyncio.to_thread(api.exec_inspect, exec_id["Id"])
    duration = time.monotonic() - started
    code = None if overdue or info.get("Running") else info.get("ExitCode")
    timed_out = overdue or _hit_timeout(code, duration, timeout)
    return ExecResult(
        exit_code=None if timed_out else code,
        timed_out=timed_out,
        duration=duration,
        output=buffer.text(),
        truncated=buffer.dropped > 0,
    )


def _hit_timeout(code: int | None, duration: float, timeout: float | None) -> bool:
    if timeout is None or code not in TIMEOUT_EXIT_CODES:
        return False
    return duration >= timeout * 0.98  # a command that exits 124 on its own is not a timeout


async def _consume(
    queue: asyncio.Queue[bytes | None],
    buffer: _CappedBuffer,
    lines: _LineSplitter,
    deadline: float | None,
) -> bool:
    """Feed output until the stream ends (False) or the host deadline passes (True)."""
    while True:
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return True
        try:
            data = await asyncio.wait_for(queue.get(), remaining)
        except TimeoutError:
            return True
        if data is None:
            return False
        buffer.add(data)
        lines.feed(data)


def _pump(sock: Any, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[bytes | None]) -> None:
    """Thread: read the multiplexed exec stream and hand the payloads to the event loop."""
    # A closed socket (the run was stopped) or a closed loop (the session ended) end the pump.
    with contextlib.suppress(Exception):
        for _stream, data in frames_iter(sock, tty=False):
            loop.call_soon_threadsafe(queue.put_nowait, data)
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(queue.put_nowait, None)


async def _stop(sock: Any, on_overdue: Callable[[], Awaitable[None]] | None) -> None:
    if on_overdue is not None:
        with contextlib.suppress(Exception):
            await asyncio.shield(on_overdue())
    with contextlib.suppress(Exception):
        sock.close()
        raw = getattr(sock, "_sock", None)
        if raw is not None:
            raw.close()
