"""Tool calls through the OpenAI tools API (llm/tools.py): the real openai SDK over real HTTP
to the scripted server, whose model answers first with a tool call, then with its text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.llm import ModelClient
from tui_engineer.llm.tools import ToolCall

ASK = [{"role": "user", "content": "What does the glossary say of 'shadow'?"}]
SPEC = {
    "type": "function",
    "function": {
        "name": "docs__lookup",
        "description": "Look a term up.",
        "parameters": {"type": "object", "properties": {"term": {"type": "string"}}},
    },
}


class Glossary:
    """A ToolBox as the engine hands one over: it lists one tool and answers it."""

    def __init__(self, max_rounds: int = 3) -> None:
        self.max_rounds = max_rounds
        self.ran: list[ToolCall] = []
        self.refusals: list[str] = []

    def specs(self) -> list[dict[str, Any]]:
        return [SPEC]

    async def run(self, call: ToolCall) -> str:
        self.ran.append(call)
        return f"{json.loads(call.arguments)['term']}: the session's own worktree"

    def refused(self, message: str) -> None:
        self.refusals.append(message)


@pytest.fixture(params=[True, False], ids=["streamed", "whole"])
async def served(request: pytest.FixtureRequest) -> AsyncIterator[ScriptedServer]:
    server = ScriptedServer(streaming=request.param).start()
    try:
        yield server
    finally:
        server.stop()
    server.check()


def answered(server: ScriptedServer) -> list[Any]:
    """The requests the model answered (not the streamed one a server without streaming
    refused)."""
    return [r for r in server.chat_requests if server.streaming or not r.stream]


def client(server: ScriptedServer) -> ModelClient:
    return ModelClient(
        model="gpt-4o-mini", base_url=server.base_url, api_key="k", timeout=5.0,
        context_window=32_000,
    )  # fmt: skip


async def test_a_tool_call_is_run_and_its_result_reaches_the_next_request(
    served: ScriptedServer,
) -> None:
    served.script(
        Reply(tool_calls=[("docs__lookup", {"term": "shadow"})], usage=(50, 10)),
        Reply(text="A shadow is the session's own worktree.", usage=(80, 12)),
    )
    box = Glossary()
    model = client(served)
    try:
        done = await model.complete(ASK, tools=box, stream=True)
    finally:
        await model.aclose()
    assert [(c.name, json.loads(c.arguments)) for c in box.ran] == [
        ("docs__lookup", {"term": "shadow"})
    ]
    first, second = answered(served)
    assert first.tools == [SPEC] and first.body["tool_choice"] == "auto"
    asked, reply = second.messages[-2:]
    assert asked["role"] == "assistant" and asked["tool_calls"][0]["function"]["name"] == (
        "docs__lookup"
    )
    assert reply == {
        "role": "tool",
        "tool_call_id": asked["tool_calls"][0]["id"],
        "content": "shadow: the session's own worktree",
    }
    assert done.text == "A shadow is the session's own worktree."
    assert done.tool_rounds == 1
    # Both calls are counted: the budget sees the tool round too.
    assert (model.ledger.prompt_tokens, model.ledger.completion_tokens) == (130, 22)
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (130, 22)


async def test_past_the_last_round_the_model_must_answer(served: ScriptedServer) -> None:
    served.script(
        Reply(tool_calls=[("docs__lookup", {"term": "a"})]),
        Reply(tool_calls=[("docs__lookup", {"term": "b"})]),
        Reply(text="Done."),
    )
    box = Glossary(max_rounds=1)
    model = client(served)
    try:
        done = await model.complete(ASK, tools=box)
    finally:
        await model.aclose()
    # Round 2's tool call (a server ignoring tool_choice "none") is not run: its reply is
    # empty, asked again as any empty reply is.
    assert [json.loads(c.arguments)["term"] for c in box.ran] == ["a"]
    assert [r.body["tool_choice"] for r in answered(served)] == ["auto", "none", "none"]
    assert done.text == "Done."


async def test_a_server_without_tool_support_is_asked_without_them_said_once(
    scripted_server: ScriptedServer,
) -> None:
    scripted_server.tools = False
    scripted_server.script(Reply(text="First."), Reply(text="Second."))
    box = Glossary()
    model = client(scripted_server)
    try:
        first = await model.complete(ASK, tools=box)
        second = await model.complete(ASK, tools=box)
    finally:
        await model.aclose()
    assert (first.text, second.text) == ("First.", "Second.")
    assert len(box.refusals) == 1 and "does not support tools" in box.refusals[0]
    # The refused request, then each call without tools.
    assert [bool(r.tools) for r in scripted_server.chat_requests] == [True, False, False]
