"""One MCP server for one session: started (over stdio, or streamable HTTP) in a task of its
own, which holds the SDK's client open until the session ends. A server that dies or never
starts takes only its own task down: the session is told, and goes on without it."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from tui_engineer.config.mcp_servers import McpServerConfig

CLOSE_TIMEOUT = 5.0  # seconds a server is given to end when the session does


class ServerFailed(Exception):
    """A server that did not start, or is gone: the message says why, for the user."""


class RunningServer:
    """The SDK's `Client` for one server, held open by `_serve` until `close`."""

    def __init__(self, config: McpServerConfig, cwd: Path) -> None:
        self.config = config
        self.cwd = cwd
        self.client: Any = None
        self.tools: list[Any] = []
        self.gone = ""  # why it can no longer be called ("" while it runs)
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout: float) -> None:
        """Started and its tools listed within `timeout` seconds, else ServerFailed."""
        self._task = asyncio.create_task(self._serve(), name=f"mcp-{self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError:
            await self.close()
            raise ServerFailed(f"no answer within {timeout:g} s{self._said()}") from None
        except ServerFailed:
            await self.close()
            raise

    async def _serve(self) -> None:
        from mcp import Client

        try:
            async with Client(self._transport()) as client:
                self.client = client
                self.tools = await _all_tools(client)
                self._ready.set_result(None)
                await self._stop.wait()
        except BaseException as err:  # noqa: BLE001 - a server's end is told, never raised here
            why = _reason(err) + self._said()
            if not self._ready.done():
                self._ready.set_exception(ServerFailed(why))
            self.gone = self.gone or why
            if isinstance(err, asyncio.CancelledError):
                raise

    def _transport(self) -> Any:
        config = self.config
        if config.url:
            from mcp.client.streamable_http import streamable_http_client

            if not config.headers:
                return streamable_http_client(config.url)
            import httpx2

            http = httpx2.AsyncClient(headers=dict(config.headers))
            return streamable_http_client(config.url, http_client=http)
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=dict(config.env) or None,
            cwd=str(self.cwd),
        )  # fmt: skip
        return stdio_client(params, errlog=self._errlog)

    def _said(self) -> str:
        """The last line the server wrote to stderr, which most often says why it failed."""
        with contextlib.suppress(OSError, ValueError):
            self._errlog.flush()
            self._errlog.seek(0)
            lines = [line.strip() for line in self._errlog.read()[-4000:].splitlines()]
            lines = [line for line in lines if line]
            if lines:
                return f"; it said: {lines[-1][:200]}"
        return ""

    async def close(self) -> None:
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            done, _ = await asyncio.wait([task], timeout=CLOSE_TIMEOUT)
            if not done:
                task.cancel()
                await asyncio.wait([task], timeout=CLOSE_TIMEOUT)
        with contextlib.suppress(OSError):
            self._errlog.close()


async def _all_tools(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(20):  # pages; a server that pages for ever is cut there
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _reason(err: BaseException) -> str:
    """One line: the innermost error of an exception group, as the user can act on it."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, FileNotFoundError):
        return f"program not found: {err.filename or err}"
    if isinstance(err, asyncio.CancelledError):
        return "stopped"
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
