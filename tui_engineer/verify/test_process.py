"""Run a shell command as a contained subprocess: own process group, timeout that kills the whole
group, output streamed line by line and capped in memory, an allow-listed environment."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.base.escapes import without_escapes
from tui_engineer.verify.environment import env_for_tests

OutputCallback = Callable[[str], None]

READ_CHUNK = 64 * 1024
# A line longer than this is streamed in pieces: one huge line must not sit in memory or block.
MAX_LINE_CHARS = 64 * 1024
KILL_GRACE_SECONDS = 1.0
# After the shell exits, how long leftover processes holding the pipe may keep writing.
DRAIN_SECONDS = 0.5


class CommandNotFound(UserError):
    """The test command's program does not exist. Raised by `LocalSandbox.run_tests` (not returned
    as a failing report) because no code edit can fix it: the user must set `test_command`."""

    def __init__(self, command: str, program: str) -> None:
        self.command = command
        self.program = program
        super().__init__(
            f"The test command `{command}` could not start: `{program}` was not found "
            "(the shell exited with code 127).\n"
            "Set `test_command` in .tui-engineer.toml (or [tool.tui-engineer] in pyproject.toml) "
            f"to the command that runs this repository's tests, or install `{program}` so it is "
            "on PATH."
        )


@dataclass
class RunResult:
    exit_code: int | None  # None when the process was killed on timeout; negative = signal
    timed_out: bool
    duration: float
    output: str  # combined stdout+stderr, capped; a "[... N bytes dropped ...]" marker if cut
    truncated: bool


def scrubbed_env(
    base: Mapping[str, str] | None = None,
    *,
    extra_secret_names: Iterable[str] = (),
    allow: Iterable[str] = (),
    secret_values: Iterable[str] = (),
) -> dict[str, str]:
    """The allow-listed part of `base` (default: os.environ) that code under test (which the
    model wrote) may see: no API keys, tokens, passwords or cloud credentials; see
    `verify.environment`."""
    return env_for_tests(
        base, allow=allow, deny_names=extra_secret_names, secret_values=secret_values
    )


class _CappedBuffer:
    """Keeps the first `head` bytes and the last `tail` bytes; counts what falls in between."""

    def __init__(self, cap: int) -> None:
        self._head_cap = cap // 5
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size > self._tail_cap:
            excess = self._tail_size - self._tail_cap
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self.dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self.dropped += excess

    def text(self) -> str:
        """The output kept, its colour and other terminal escapes taken out."""
        head = without_escapes(bytes(self._head).decode("utf-8", errors="replace"))
        tail = without_escapes(b"".join(self._tail).decode("utf-8", errors="replace"))
        if not self.dropped:
            return head + tail
        return f"{head}\n[... {self.dropped} bytes dropped ...]\n{tail}"


class _LineSplitter:
    """Decodes a byte stream as UTF-8 (errors replaced) and hands out complete lines, with no
    terminal escapes (colours) in them."""

    def __init__(self, on_line: OutputCallback | None) -> None:
        self._on_line = (lambda line: on_line(without_escapes(line))) if on_line else None
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, data: bytes, *, final: bool = False) -> None:
        if self._on_line is None:
            return
        text = self._pending + self._decoder.decode(data, final=final)
        *lines, self._pending = text.split("\n")
        for line in lines:
            self._on_line(line.removesuffix("\r"))
        while len(self._pending) > MAX_LINE_CHARS:
            self._on_line(self._pending[:MAX_LINE_CHARS])
            self._pending = self._pending[MAX_LINE_CHARS:]
        if final and self._pending:
            self._on_line(self._pending)
            self._pending = ""


async def _open_output_pipe() -> tuple[int, asyncio.StreamReader, asyncio.ReadTransport]:
    """A pipe for the child's stdout+stderr whose read end we own, so we can close it even if
    a process that escaped the group still holds the write end (asyncio's own pipes would keep
    `proc.wait()` and the transport open until every writer is gone)."""
    read_fd, write_fd = os.pipe()
    stream = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:
        os.close(write_fd)
        raise
    return write_fd, stream, transport


async def _pump(stream: asyncio.StreamReader, buffer: _CappedBuffer, lines: _LineSplitter) -> None:
    while data := await stream.read(READ_CHUNK):
        buffer.add(data)
        lines.feed(data)
    lines.feed(b"", final=True)


def _signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to the process group; False when nothing in the group is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        # macOS reports EPERM for a group made only of zombies.
        return False
    return True


async def _wait_exit(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Wait until the shell itself exits; True if it did within `timeout`."""
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        return False
    return True


async def _kill_group(proc: asyncio.subprocess.Process, grace: float) -> None:
    """SIGTERM the whole group, SIGKILL it once the shell has gone or after `grace` seconds.

    Everyone got SIGTERM at the same moment; stragglers are not waited for one by one (zombies
    reparented to init would look alive until reaped)."""
    if _signal_group(proc.pid, signal.SIGTERM):
        await _wait_exit(proc, grace)
    _signal_group(proc.pid, signal.SIGKILL)
    await _wait_exit(proc, grace)


async def _finish_reading(reader: asyncio.Task[None], timeout: float) -> None:
    """Wait for EOF; a process that escaped the group could hold the pipe open forever."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(reader), timeout)
    if not reader.done():
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


@dataclass
class StartedCommand:
    """A command started by `start_command`, not yet waited for (see `finish_command`)."""

    proc: asyncio.subprocess.Process
    stream: asyncio.StreamReader
    transport: asyncio.ReadTransport
    started: float  # time.monotonic() when it was started


async def start_command(
    argv_or_shell: str,
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    stdin_pipe: bool = False,
) -> StartedCommand:
    """Start a shell command string via /bin/sh in its own process group, its stdout+stderr
    going to a pipe we own; stdin is empty, or a pipe (`proc.stdin`) with `stdin_pipe`."""
    write_fd, stream, transport = await _open_output_pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            argv_or_shell,
            cwd=cwd,
            env=dict(scrubbed_env() if env is None else env),
            stdin=asyncio.subprocess.PIPE if stdin_pipe else asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    except BaseException:
        transport.close()
        raise
    finally:
        os.close(write_fd)  # the child has its copy; ours would keep EOF from ever coming
    return StartedCommand(proc, stream, transport, time.monotonic())


async def finish_command(
    started: StartedCommand,
    *,
    timeout: float,
    on_output: OutputCallback | None = None,
    output_cap_bytes: int = 2_000_000,
) -> RunResult:
    """Wait for a started command (`timeout` and the duration count from `started.started`),
    streaming its output; then end its whole group. See `run_command`."""
    proc = started.proc
    buffer = _CappedBuffer(output_cap_bytes)
    reader = asyncio.create_task(_pump(started.stream, buffer, _LineSplitter(on_output)))
    try:
        left = max(0.0, timeout - (time.monotonic() - started.started))
        timed_out = not await _wait_exit(proc, left)
        # Also after a normal exit: background processes the tests left must not outlive them.
        await _kill_group(proc, KILL_GRACE_SECONDS)
        await _finish_reading(reader, DRAIN_SECONDS)
    except BaseException:
        # Cancelled (the user quit) or on_output raised: never leave the group running.
        _signal_group(proc.pid, signal.SIGKILL)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await _wait_exit(proc, KILL_GRACE_SECONDS)
            await reader
        raise
    finally:
        started.transport.close()
    exit_code = None if timed_out else proc.returncode
    return RunResult(
        exit_code=exit_code,
        timed_out=timed_out,
        duration=time.monotonic() - started.started,
        output=buffer.text(),
        truncated=buffer.dropped > 0,
    )


async def discard_command(started: StartedCommand) -> None:
    """End a started command's whole group without waiting for its output."""
    try:
        await _kill_group(started.proc, KILL_GRACE_SECONDS)
    finally:
        started.transport.close()
        if started.proc.stdin is not None:  # closed now, not when collected after the loop
            started.proc.stdin.close()


async def run_command(
    argv_or_shell: str,
    cwd: Path,
    *,
    timeout: float,
    on_output: OutputCallback | None = None,
    env: Mapping[str, str] | None = None,
    output_cap_bytes: int = 2_000_000,
) -> RunResult:
    """Run a shell command string via /bin/sh in its own process group.

    Lines (without their newline) go to `on_output` as they arrive. On timeout, or when the
    awaiting task is cancelled, the whole group gets SIGTERM, then SIGKILL after a short grace.
    Leftover background processes are killed when the shell exits. `env` is used as given: pass
    `scrubbed_env()` (the default when None) or something built from it.
    """
    started = await start_command(argv_or_shell, cwd, env=env)
    return await finish_command(
        started, timeout=timeout, on_output=on_output, output_cap_bytes=output_cap_bytes
    )
