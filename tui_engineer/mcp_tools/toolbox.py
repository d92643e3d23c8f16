"""The session's MCP tools: started together, listed in the OpenAI tools shape, each call run
with a time bound and its output cut to a bound, a failing one answered as text.

Bounds (each told to the model when it is reached): `mcp_tool_timeout` seconds per call (a tool
that hangs is not offered again), OUTPUT_CHARS characters of result, `mcp_rounds` rounds of
tool calls per model call (llm/tools.py). Every round is a model call of its own, counted in
the session's token and money budgets like any other.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui_engineer.config.mcp_servers import McpServerConfig
from tui_engineer.engine.tool_use import ToolResult
from tui_engineer.llm.tools import parse_arguments
from tui_engineer.mcp_tools.server import RunningServer, ServerFailed

START_TIMEOUT = 30.0  # seconds a server has to start and list its tools
OUTPUT_CHARS = 8000  # of one tool's result, as the model gets it
DESCRIPTION_CHARS = 1000  # of a tool's description, in every request that offers it
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpTools:
    """The tools of the servers that started (engine/tool_use.py's SessionTools)."""

    def __init__(self, servers: Sequence[RunningServer], *, timeout: float, rounds: int) -> None:
        self.servers = list(servers)
        self.timeout = timeout
        self.max_rounds = rounds
        self.notices: list[str] = []  # said at the session's start
        self._ids = itertools.count(1)
        self._named: dict[str, tuple[RunningServer, Any]] = {}
        self._dropped: set[str] = set()  # tools that hung: not offered again
        for server in self.servers:
            for tool in server.tools:
                self._named[_function_name(server.config.name, tool.name, self._named)] = (
                    server,
                    tool,
                )

    def specs(self) -> list[dict[str, Any]]:
        if self.max_rounds <= 0:
            return []
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": (tool.description or tool.title or tool.name or "")[
                        :DESCRIPTION_CHARS
                    ],
                    "parameters": tool.input_schema or {"type": "object", "properties": {}},
                },
            }
            for name, (server, tool) in self._named.items()
            if not server.gone and name not in self._dropped
        ]

    def describe(self, name: str) -> tuple[str, str, str]:
        found = self._named.get(name)
        if found is None:
            return "?", name, "other"
        server, tool = found
        return server.config.name, tool.name, _kind(tool)

    def next_id(self) -> str:
        return f"mcp-{next(self._ids)}"

    async def call(self, name: str, arguments: str) -> ToolResult:
        """Run one tool call; never raises: a problem is the text the model reads."""
        found = self._named.get(name)
        if found is None or name in self._dropped:
            return ToolResult(f"No tool {name!r} here: use one of the tools offered.", False)
        server, tool = found
        if server.gone:
            gone = f"The MCP server {server.config.name} is gone ({server.gone})."
            return ToolResult(gone, False)
        args = parse_arguments(arguments)
        if isinstance(args, str):
            return ToolResult(args, False)
        try:
            result = await asyncio.wait_for(server.client.call_tool(tool.name, args), self.timeout)
        except TimeoutError:
            self._dropped.add(name)
            return ToolResult(
                f"The tool {tool.name} of {server.config.name} gave no answer within "
                f"{self.timeout:g} s: it was stopped and is not offered again.",
                False,
            )
        except Exception as err:  # noqa: BLE001 - the SDK's, the transport's, the server's
            return ToolResult(f"The tool {tool.name} failed: {_first_line(err)}", False)
        return ToolResult(_cut(result_text(result)), not getattr(result, "is_error", False))

    async def close(self) -> None:
        await asyncio.gather(*(s.close() for s in self.servers), return_exceptions=True)


async def start_tools(
    servers: Sequence[McpServerConfig], cwd: Path, *, timeout: float = 30.0, rounds: int = 4
) -> McpTools:
    """Start every server at once (each in `cwd`, the user's repository); one that does not
    start is a notice and is left out. The SDK is imported in a thread (about a second)."""
    await asyncio.to_thread(importlib.import_module, "mcp")
    running = [RunningServer(config, cwd) for config in servers]
    try:
        outcomes = await asyncio.gather(*(_started(s) for s in running))
    except BaseException:  # the session stopped meanwhile: no process is left behind
        await asyncio.gather(*(s.close() for s in running), return_exceptions=True)
        raise
    tools = McpTools([s for s, why in zip(running, outcomes, strict=True) if not why],
                     timeout=timeout, rounds=rounds)  # fmt: skip
    for server, why in zip(running, outcomes, strict=True):
        if why:
            tools.notices.append(
                f"MCP server {server.config.shown} did not start ({why}): the session goes on "
                "without its tools."
            )
        else:
            names = ", ".join(t.name for t in server.tools) or "no tools"
            tools.notices.append(f"MCP server {server.config.name} started: {names}.")
    return tools


async def _started(server: RunningServer) -> str:
    """ "" once started, else why not."""
    try:
        await server.start(START_TIMEOUT)
    except ServerFailed as err:
        return str(err)
    return ""


def result_text(result: Any) -> str:
    """A tool result as text: its text parts; structured content as JSON when it has none."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource":
            parts.append(getattr(block.resource, "text", "") or f"[resource {block.resource.uri}]")
        else:
            parts.append(f"[{kind or 'content'} not shown]")
    if not parts and getattr(result, "structured_content", None) is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts) or "(no output)"


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n… (cut: {len(text) - OUTPUT_CHARS} more characters)"


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:300]


def _kind(tool: Any) -> str:
    """ACP's tool kind: fetch for a tool that reaches out, read for a read-only one."""
    hints = getattr(tool, "annotations", None)
    if "fetch" in tool.name.lower() or getattr(hints, "open_world_hint", False):
        return "fetch"
    if getattr(hints, "read_only_hint", False):
        return "read"
    return "other"


def _function_name(server: str, tool: str, taken: dict[str, Any]) -> str:
    """`server__tool`, as the OpenAI API allows function names (64 of [A-Za-z0-9_-])."""
    base = _UNSAFE.sub("_", f"{server}__{tool}")[:60]
    name, n = base, 2
    while name in taken:
        name, n = f"{base[:57]}_{n}", n + 1
    return name
