"""The protocol's own stdin/stdout: from the moment they are taken, file descriptor 1 is stderr,
so a stray print, a warning or a child process's output goes to the log and can never corrupt
the JSON-RPC stream every client reads from stdout."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from typing import Any, BinaryIO

# As the SDK's run_agent: room for a large diff or test output in one message.
LINE_LIMIT = 50 * 1024 * 1024


async def protocol_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """(reader of stdin, writer to the real stdout); fd 1 (and `print`) go to stderr after."""
    loop = asyncio.get_running_loop()
    protocol_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    if _is_stream(sys.stdin.fileno()):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:  # a file (`acp < messages.jsonl`): read in a thread
        _feed_from_thread(loop, reader, sys.stdin.buffer)
    if _is_stream(protocol_out.fileno()):
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, protocol_out
        )
    else:  # a file (`acp > log`): plain writes never block for long
        transport, protocol = _FileTransport(protocol_out), asyncio.streams.FlowControlMixin()
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)  # type: ignore[arg-type]


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _feed_from_thread(
    loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, source: BinaryIO
) -> None:
    def read() -> None:
        try:
            while data := source.readline():
                loop.call_soon_threadsafe(reader.feed_data, data)
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=read, name="acp-stdin", daemon=True).start()


class _FileTransport(asyncio.WriteTransport):
    def __init__(self, out: BinaryIO) -> None:
        super().__init__()
        self._out = out
        self._closing = False

    def write(self, data: Any) -> None:
        if not self._closing:
            self._out.write(data)

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0
