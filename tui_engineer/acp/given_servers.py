"""The MCP servers an editor hands over in session/new and session/load (`mcpServers`), as the
session starts them (config/mcp_servers.py's McpServerConfig): stdio ones, and HTTP ones
through the SDK's streamable HTTP client. SSE servers (deprecated by MCP) are not started:
the session says so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_engineer.config.mcp_servers import McpServerConfig

ORIGIN = "the editor (session/new)"


def given_servers(servers: Sequence[Any] | None) -> tuple[tuple[McpServerConfig, ...], list[str]]:
    """The servers to start, and what is said of those that are not."""
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
