"""A call that never finishes is bounded whatever bytes arrive (issue 52, part 3): a stream of
SSE keep-alive comments or empty deltas is idle after the idle time (no text is what counts, not
bytes), and every call has a total bound. Real openai client, real HTTP, the scripted server."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tui_engineer.llm import ModelClient, ModelReplyError, ServerUnreachable

ASK = [{"role": "user", "content": "Say hello."}]


def make(clients: list[ModelClient], server: ScriptedServer, **kw: Any) -> ModelClient:
    kw.setdefault("timeout", 0.5)
    client = ModelClient(
        model="local-model", base_url=server.base_url, api_key="sk-test", max_retries=0, **kw
    )
    clients.append(client)
    return client


@pytest.mark.parametrize("stall", ["keep-alive", "empty"])
async def test_a_stream_live_but_with_no_text_is_idle(scripted_server, clients, stall):
    scripted_server.script(*[Reply(text="a b", stall=stall)] * 3)
    started = time.monotonic()
    with pytest.raises(ServerUnreachable, match=r"sent no text for 0.5 s .* 3 times"):
        await make(clients, scripted_server).complete(ASK)
    assert time.monotonic() - started < 4  # 3 × 0.5 s, not forever


async def test_a_stall_once_is_asked_again(scripted_server, clients):
    scripted_server.script(Reply(text="a b", stall="keep-alive"), Reply(text="hello"))
    resets: list[str] = []
    done = await make(clients, scripted_server).complete(ASK, on_retry=resets.append)
    assert done.text == "hello" and resets == ["idle"]


async def test_every_call_has_a_total_bound(scripted_server, clients):
    """Text every 0.1 s (never idle) for 40 s: stopped at the call's bound, not retried."""
    scripted_server.script(Reply(text="w " * 400, chunk_delay=0.1))
    client = make(clients, scripted_server, call_timeout=1.0)
    shown: list[str] = []
    started = time.monotonic()
    with pytest.raises(ModelReplyError, match=r"took longer than 1 s in all \(call_timeout\)"):
        await client.complete(ASK, on_text=shown.append)
    assert time.monotonic() - started < 2.5
    assert shown and len(scripted_server.chat_requests) == 1
    assert client.ledger.completion_tokens > 0  # the partial reply is counted


def test_the_total_bound_is_on_by_default():
    from tui_engineer.config.settings import Settings

    assert Settings().call_timeout == 1800
