"""The session's MCP servers, started where every front end's session starts (run_prepared):
the user config's [mcp_servers] and an editor's, beside the shadow's creation, so their
start-up (a process each, the SDK's import) overlaps git's. One that does not start is a
notice; the session goes on without it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_engineer.config.mcp_servers import McpServerConfig
from tui_engineer.engine import events as ev
from tui_engineer.engine.events import EventSink

if TYPE_CHECKING:
    from tui_engineer.config import Settings
    from tui_engineer.mcp_tools import McpTools


def start_session_tools(
    servers: Sequence[McpServerConfig], root: Path, settings: Settings
) -> asyncio.Task[McpTools] | None:
    """Start the servers in a task (None when there are none)."""
    if not servers:
        return None
    from tui_engineer.mcp_tools import start_tools

    return asyncio.ensure_future(
        start_tools(servers, root, timeout=settings.mcp_tool_timeout, rounds=settings.mcp_rounds)
    )


class KeptTools:
    """An editor's MCP servers, kept for its whole session: each prompt that is a new request
    is a run of its own (run_prepared), but the servers are the session's, started by its first
    run and stopped with it (`close`), not once per request: a start costs a process and the
    SDK's import (~1.4 s), and a server's own state (a login, a cache) would be lost."""

    def __init__(self) -> None:
        self.starting: asyncio.Task[McpTools] | None = None
        self.said = False  # each server's start is said at the first run only

    def start(
        self, servers: Sequence[McpServerConfig], root: Path, settings: Settings
    ) -> asyncio.Task[McpTools] | None:
        if self.starting is None or self.starting.cancelled():
            self.starting, self.said = start_session_tools(servers, root, settings), False
        return self.starting

    async def close(self) -> None:
        await close_session_tools(self.starting)
        self.starting = None


async def session_tools(
    starting: asyncio.Task[McpTools] | None, emit: EventSink, *, say: bool = True
) -> McpTools | None:
    """The started servers' tools (None without any), each server's start said (`say`)."""
    if starting is None:
        return None
    try:
        tools = await asyncio.shield(starting)  # a run's stop leaves kept servers starting
    except Exception as err:  # noqa: BLE001 - the session goes on without them
        if say:
            emit(ev.Notice(message=f"The MCP servers could not be started ({err}): the "
                           "session goes on without their tools."))  # fmt: skip
        return None
    for sentence in tools.notices if say else ():
        emit(ev.Notice(message=sentence))
    return tools if tools.specs() else None


async def close_session_tools(starting: asyncio.Task[McpTools] | None) -> None:
    """Every server ends with the session (a start cut short by a stop too)."""
    if starting is None:
        return
    if not starting.done():
        starting.cancel()
    with contextlib.suppress(BaseException):
        await starting
    if starting.done() and not starting.cancelled() and starting.exception() is None:
        await starting.result().close()


ORIGIN = "the editor (session/new)"


def editor_servers(servers: Sequence[Any] | None) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The MCP servers an editor hands over in session/new and session/load (`mcpServers`,
    the ACP SDK's models, read by their fields): stdio ones, and HTTP ones through the SDK's
    streamable HTTP client; an SSE one (deprecated by MCP) is said and not started. Returns
    the servers to start, and what is said of those that are not."""
    started: list[McpServerConfig] = []
    said: list[str] = []
    for server in servers or ():
        kind = getattr(server, "type", "stdio")
        name = str(getattr(server, "name", "") or f"server{len(started) + 1}")
        if getattr(server, "command", None):
            env = tuple((v.name, v.value) for v in server.env or ())
            started.append(
                McpServerConfig(name, server.command, tuple(server.args or ()), env, origin=ORIGIN)
            )
        elif kind == "http" and getattr(server, "url", None):
            headers = tuple((h.name, h.value) for h in server.headers or ())
            started.append(McpServerConfig(name, url=server.url, origin=ORIGIN, headers=headers))
        else:
            said.append(
                f"MCP server {name} ({kind}) is not started: this agent connects to stdio and "
                "HTTP servers only."
            )
    return tuple(started), said
