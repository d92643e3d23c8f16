"""The tools of the session's MCP servers, as the model's calls use them, shown as events.

The engine knows only `SessionTools` (what tui_engineer/mcp_tools/ starts for a session): it
offers them on the calls that do the work (plan, propose, diagnose, fix), and each tool call
becomes a `ToolCallStarted` and a `ToolCallFinished` event, which every front end shows (the
TUI's chat, headless lines, ACP tool calls).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tui_engineer.engine import events as ev
from tui_engineer.llm.tools import ToolCall

# The calls that may use tools: those whose reply is a plan, an edit or a diagnosis.
TOOL_PURPOSES = frozenset({"plan", "replan", "propose", "diagnose", "fix"})


@dataclass(frozen=True)
class ToolResult:
    text: str  # what the model reads (bounded)
    ok: bool


class SessionTools(Protocol):
    """The session's tools (mcp_tools.McpTools)."""

    max_rounds: int

    def specs(self) -> list[dict[str, Any]]: ...

    def describe(self, name: str) -> tuple[str, str, str]:
        """(server, tool, kind) for a function name the model used."""
        ...

    async def call(self, name: str, arguments: str) -> ToolResult: ...

    def next_id(self) -> str: ...


class ShownTools:
    """One model call's view of the session's tools (llm/tools.py's ToolBox): every call
    is told before it runs and after, with its result."""

    def __init__(
        self, tools: SessionTools, emit: ev.EventSink, purpose: str, step: int | None
    ) -> None:
        self.tools = tools
        self.emit = emit
        self.purpose = purpose
        self.step = step
        self.max_rounds = tools.max_rounds

    def specs(self) -> list[dict[str, Any]]:
        return self.tools.specs()

    def refused(self, message: str) -> None:
        self.emit(
            ev.Notice(
                message="The model server refused a request with tools (it has no tool "
                f"support: {message}): the MCP servers' tools are left out from now on."
            )
        )

    async def run(self, call: ToolCall) -> str:
        server, tool, kind = self.tools.describe(call.name)
        about = {  # what both events say of the call
            "call_id": self.tools.next_id(), "server": server, "tool": tool,
            "arguments": call.arguments, "purpose": self.purpose, "step": self.step,
        }  # fmt: skip
        self.emit(ev.ToolCallStarted(**about, kind=kind))
        started = time.monotonic()
        result = await self.tools.call(call.name, call.arguments)
        seconds = round(time.monotonic() - started, 3)
        self.emit(ev.ToolCallFinished(**about, ok=result.ok, result=result.text, seconds=seconds))
        return result.text


def tool_line(event: ev.ToolCallFinished) -> str:
    """The one line a front end shows for a tool call: what was called, with what, and how it
    went (the result's first line, or why it failed)."""
    args = " ".join(event.arguments.split())
    args = args if len(args) <= 80 else args[:79] + "…"
    first = next((line.strip() for line in event.result.splitlines() if line.strip()), "")
    first = first if len(first) <= 100 else first[:99] + "…"
    said = f"{len(event.result):,} chars: {first}" if event.ok else f"failed: {first}"
    called = f"tool {event.server}.{event.tool}({args}) for the {event.purpose} call"
    return f"{called} — {said} ({event.seconds:.1f} s)"


def shown_tools(
    tools: SessionTools | None, emit: Callable[[ev.Event], None], purpose: str, step: int | None
) -> ShownTools | None:
    """The tools a call with `purpose` is offered, or None."""
    if tools is None or purpose not in TOOL_PURPOSES or not tools.specs():
        return None
    return ShownTools(tools, emit, purpose, step)
