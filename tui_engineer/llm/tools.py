"""Tools the model may call before its reply (the OpenAI tools API), bounded per call.

The client does not know where the tools come from (MCP servers: tui_engineer/mcp_tools/):
a `ToolBox` lists them in the OpenAI `tools` shape and runs one call, never raising (an
error, a time-out or a missing tool is a text the model reads). `ToolRounds` is one model
call's use of them: at most `max_rounds` replies with tool calls, each round's results sent
back as `tool` messages, then the model is asked to answer (`tool_choice` "none").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

Message = dict[str, Any]  # a tool message carries more than text
MAX_CALLS_PER_ROUND = 8  # tool calls run from one reply; any more are answered "not run"


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a model reply: `arguments` is the JSON text the model wrote."""

    id: str
    name: str
    arguments: str


class ToolBox(Protocol):
    """What the model may call. `run` never raises: its text is the model's answer."""

    max_rounds: int

    def specs(self) -> list[dict[str, Any]]: ...

    async def run(self, call: ToolCall) -> str: ...

    def refused(self, message: str) -> None:
        """The model server refused a request with tools (no tool support): said once."""
        ...


class ToolRounds:
    """One model call's tool rounds."""

    def __init__(self, box: ToolBox | None) -> None:
        self.box = box
        self.rounds = 0

    def offer(self) -> dict[str, Any]:
        """The request's `tools` and `tool_choice` ({} when none are offered). Past the last
        round the tools stay listed (the conversation names them) but may not be called."""
        specs = self.box.specs() if self.box is not None else []
        if not specs:
            return {}
        choice = "auto" if self.rounds < self.box.max_rounds else "none"  # type: ignore[union-attr]
        return {"tools": specs, "tool_choice": choice}

    def more(self) -> bool:
        """Whether a reply's tool calls are still answered (a server that calls tools after
        `tool_choice` "none" does not loop for ever)."""
        return self.box is not None and self.rounds < self.box.max_rounds

    async def answer(self, text: str, calls: list[ToolCall]) -> list[Message]:
        """The reply that asked for `calls` and each one's result, as the next request's
        messages."""
        assert self.box is not None
        self.rounds += 1
        asked: Message = {
            "role": "assistant",
            "content": text,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in calls
            ],
        }
        answers: list[Message] = [asked]
        for index, call in enumerate(calls):
            if index < MAX_CALLS_PER_ROUND:
                result = await self.box.run(call)
            else:
                result = f"Not run: at most {MAX_CALLS_PER_ROUND} tool calls per reply."
            answers.append({"role": "tool", "tool_call_id": call.id, "content": result})
        return answers


def parse_arguments(text: str) -> dict[str, Any] | str:
    """The arguments as a dict, or the sentence that tells the model what was wrong."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as err:
        return f"The arguments are not valid JSON ({err.msg}); send a JSON object."
    if not isinstance(value, dict):
        return "The arguments must be a JSON object."
    return value
