"""A command on a pseudo-terminal, read with asyncio: stdin, stdout and stderr are the
terminal's, so a program that checks isatty() sees one, a REPL or `read` waits for what the
human types (`write`), and Ctrl-C typed (\\x03) interrupts the program as in a terminal.

The standard library's `os.openpty` is enough here (no dependency): the master end is read
with the event loop's reader, the child waits in asyncio's own child watcher. The child is the
leader of a new session (`start_new_session`) whose controlling terminal is this one, so the
terminal's line discipline sends Ctrl-C's SIGINT and a resize's SIGWINCH to its process group,
and `killpg` of its pid still stops it and everything it started. Making the terminal the
controlling one (TIOCSCTTY) must happen in the child: a tiny `python -c` does it and execs the
command, rather than a `preexec_fn`, which runs Python between fork and exec and is not safe
in a program with threads (the app's), nor Linux-only `setsid --ctty`.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import struct
import sys
import termios
from collections.abc import Callable, Mapping, Sequence

TERM = "xterm-256color"  # what the emulator (terminal_screen.py, pyte) understands
# Output a child in the background still writes after the command ended is read this long.
DRAIN_QUIET = 0.3
DRAIN_LIMIT = 2.0  # and no longer, if it keeps writing
# What the terminal holds when the command ends is read up to this much: its buffers hold
# tens of KB (~30 KB here); more would be a child left running that keeps writing, which the
# drain above bounds in time instead.
BUFFERED_BYTES = 128 * 1024
_TAKE_TERMINAL = (
    "import fcntl,os,sys,termios;fcntl.ioctl(0,termios.TIOCSCTTY,0);"
    "os.execvp(sys.argv[1],sys.argv[1:])"
)


def set_size(fd: int, columns: int, lines: int) -> None:
    """The terminal's size (TIOCSWINSZ); the program's process group gets SIGWINCH."""
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))


class PtyCommand:
    """One command started on a new pseudo-terminal; `run` reads it to its end."""

    def __init__(self, process: asyncio.subprocess.Process, master: int) -> None:
        self.process = process
        self._master = master
        self._pending = b""  # typed, not yet taken by the terminal (its input queue was full)

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    async def start(
        cls, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], columns: int, lines: int
    ) -> PtyCommand:
        # The size is the terminal's alone: COLUMNS or LINES inherited (a terminal's tmux hands
        # them out) would win over it in many programs, and be wrong after the first resize.
        env = {k: v for k, v in env.items() if k not in ("COLUMNS", "LINES")} | {"TERM": TERM}
        master, slave = os.openpty()
        try:
            set_size(slave, columns, lines)
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-I", "-S", "-c", _TAKE_TERMINAL, *argv, cwd=cwd, env=env,
                stdin=slave, stdout=slave, stderr=slave, start_new_session=True,
            )  # fmt: skip
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(slave)  # the child holds it: the master reads end of file when all do
        os.set_blocking(master, False)
        return cls(process, master)

    async def run(self, on_output: Callable[[bytes], object]) -> int:
        """Give each chunk of output to `on_output` until the command ends; its exit code
        (128 + the signal's number when a signal ended it, as a shell says it). One chunk is
        read at a time, the next once `on_output` has taken it: a program writing faster than
        the screen is emulated waits, as in a terminal, and a stop is seen at once."""
        exited = asyncio.ensure_future(self.process.wait())
        try:
            ended = False
            while not ended and not exited.done():
                chunk = self._next_chunk()
                await asyncio.wait({chunk, exited}, return_when=asyncio.FIRST_COMPLETED)
                ended = self._take(chunk, on_output)
            code = await exited
            # What it wrote before it ended is in the terminal's buffers: all of it, however
            # long the screen takes; then what a child it left running writes, for a while.
            ended = ended or await self._read_buffered(on_output)
            drained = asyncio.get_running_loop().time() + DRAIN_LIMIT
            while not ended and asyncio.get_running_loop().time() < drained:
                chunk = self._next_chunk()
                await asyncio.wait({chunk}, timeout=DRAIN_QUIET)
                quiet = not chunk.done()
                ended = self._take(chunk, on_output) or quiet
        finally:
            exited.cancel()
            self._close()
        return 128 - code if code < 0 else code

    async def _read_buffered(self, on_output: Callable[[bytes], object]) -> bool:
        """Hand on what the terminal holds now (True at its end), read without waiting: the
        kernel passes on its pending output on each read, so no time limit can cut it short.
        Bounded, as a child left running may keep writing."""
        taken = 0
        while taken < BUFFERED_BYTES:
            try:
                data = os.read(self._master, 65536)
            except BlockingIOError:
                return False
            except OSError:  # EIO: nothing holds the terminal any more
                return True
            if not data:
                return True
            taken += len(data)
            on_output(data)
            await asyncio.sleep(0)  # the screen draws between chunks
        return False

    def _next_chunk(self) -> asyncio.Future[bytes]:
        """The next chunk of output (b"" at the end), read when the terminal has one."""
        loop = asyncio.get_running_loop()
        got: asyncio.Future[bytes] = loop.create_future()
        master = self._master

        def readable() -> None:
            try:
                data = os.read(master, 65536)
            except BlockingIOError:
                return
            except OSError:  # EIO: nothing holds the terminal any more
                data = b""
            loop.remove_reader(master)
            got.set_result(data)

        loop.add_reader(master, readable)
        return got

    def _take(self, chunk: asyncio.Future[bytes], on_output: Callable[[bytes], object]) -> bool:
        """Hand on a chunk read (True at the end); one not read yet is no longer waited for."""
        if not chunk.done():
            asyncio.get_running_loop().remove_reader(self._master)
            chunk.cancel()
            return False
        data = chunk.result()
        if data:
            on_output(data)
        return not data

    def _close(self) -> None:
        loop = asyncio.get_running_loop()
        loop.remove_reader(self._master)
        loop.remove_writer(self._master)
        os.close(self._master)
        self._master = -1

    def write(self, data: bytes) -> None:
        """Bytes typed into the program (what a terminal sends for the keys)."""
        if self._master < 0:
            return
        self._pending += data
        self._flush()

    def _flush(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            sent = os.write(self._master, self._pending) if self._pending else 0
        except BlockingIOError:
            sent = 0
        except OSError:  # the terminal is gone
            self._pending = b""
            sent = 0
        self._pending = self._pending[sent:]
        loop.remove_writer(self._master)
        if self._pending:
            loop.add_writer(self._master, self._flush)

    def resize(self, columns: int, lines: int) -> None:
        if self._master >= 0:
            with contextlib.suppress(OSError):
                set_size(self._master, columns, lines)
