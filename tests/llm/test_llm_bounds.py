"""Bounded model calls (issue 9/10): budgets enforced during a stream, the context window, and
bounded retries of broken replies. Real openai client, real HTTP, the scripted server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tests.timing_support import REACHED
from tui_engineer.llm import (
    Budget,
    BudgetExceeded,
    ContextWindowExceeded,
    ModelClient,
    ModelReplyError,
    ServerUnreachable,
)

ASK = [{"role": "user", "content": "Write a long story."}]
LONG = "word " * 400  # 400 chunks of ~1 token


def make(clients: list[ModelClient], server: ScriptedServer, **kw: Any) -> ModelClient:
    kw.setdefault("timeout", 5.0)
    kw.setdefault("model", "local-model")
    client = ModelClient(base_url=server.base_url, api_key="k", max_retries=0, **kw)
    clients.append(client)
    return client


async def test_time_budget_cuts_a_slow_stream_within_a_second(scripted_server, clients):
    scripted_server.script(Reply(text=LONG, chunk_delay=0.05))  # 20 s of streaming
    budget = Budget(max_wall_seconds=1.0)
    client = make(clients, scripted_server, budget=budget)
    shown: list[str] = []
    started = time.monotonic()
    with pytest.raises(BudgetExceeded, match="Time budget reached during a model call") as err:
        await client.complete(ASK, on_text=shown.append)
    assert time.monotonic() - started < 2.0  # cap 1 s + at most 1 s overshoot
    assert err.value.budget == "wall_time"
    assert shown, "the partial reply was streamed before the cut"
    assert client.ledger.completion_tokens > 0  # the partial reply is counted, estimated
    assert client.ledger.estimated


async def test_token_budget_cuts_a_stream_within_one_chunk(scripted_server, clients):
    scripted_server.script(Reply(text=LONG, report_usage=False))
    client = make(clients, scripted_server, budget=Budget(max_tokens=150))
    shown: list[str] = []
    # The cap (130) is above where the budget runs out (~112 chunks): this server streams past
    # any cap, and the client would cut the stream at the cap first.
    with pytest.raises(BudgetExceeded, match="Token budget reached during a reply") as err:
        await client.complete(ASK, on_text=shown.append, max_output_tokens=130)
    assert err.value.budget == "tokens"
    # never more than one streamed chunk (here ~2 tokens) past the cap
    assert 150 < client.ledger.total_tokens <= 153
    assert len(shown) < 400


async def test_a_server_that_ignores_the_reply_cap_is_cut_there_then_sent_max_tokens(
    scripted_server, clients
):
    """llama-cpp-python reads only `max_tokens`: a reply capped at 128 tokens ran on to the end
    of the context window (minutes on a CPU). The client stops reading at the cap, treats the
    reply as cut by the limit, and names the cap `max_tokens` from then on."""
    scripted_server.script(Reply(text=LONG), Reply(text="word " * 10))
    client = make(clients, scripted_server, max_continuations=0)
    shown: list[str] = []
    with pytest.raises(ModelReplyError, match="cut off by the token limit"):
        await client.complete(ASK, on_text=shown.append, max_output_tokens=20)
    assert len(shown) <= 20 + 3  # one chunk past the cap (and slack), not the 400 chunks
    await client.complete(ASK, max_output_tokens=20)
    first, second = (r.body or {} for r in scripted_server.chat_requests)
    assert first["max_completion_tokens"] == 20 and "max_tokens" not in first
    assert second["max_tokens"] == 20 and "max_completion_tokens" not in second


async def test_reply_cap_is_lowered_to_fit_the_window(scripted_server, clients):
    scripted_server.script(Reply(text="ok"))
    client = make(clients, scripted_server, context_window=1000)
    await client.complete(ASK, max_output_tokens=4096)
    assert scripted_server.chat_requests[0].body["max_completion_tokens"] < 1000


async def test_prompt_over_the_window_is_not_sent_and_names_the_window(scripted_server, clients):
    client = make(clients, scripted_server, context_window=500)
    big = [{"role": "user", "content": "x" * 4000}]  # ~1000 tokens
    with pytest.raises(ContextWindowExceeded, match="context window of 500 tokens"):
        await client.complete(big, max_output_tokens=100)
    assert scripted_server.chat_requests == []


async def test_reply_cut_at_the_window_is_not_continued(clients):
    with ScriptedServer(context_window=400) as server:
        server.script(Reply(text=LONG))
        client = make(clients, server, context_window=400)
        with pytest.raises(ContextWindowExceeded, match=r"context window \(400 tokens"):
            await client.complete(ASK, max_output_tokens=1000)
        assert len(server.chat_requests) == 1  # no continuation that would overflow


async def test_dropped_stream_after_a_large_prompt_names_the_likely_cause(clients):
    with ScriptedServer(context_window=2000, overflow="drop", report_window=False) as server:
        server.script(*[Reply(text="never")] * 3)
        client = make(clients, server)  # neither the config nor the server says the window
        big = [{"role": "user", "content": "y" * 12000}]  # ~3000 tokens
        with pytest.raises(ModelReplyError) as err:
            await client.complete(big)
    text = str(err.value)
    assert "prompt was about 3,0" in text and "context window" in text


async def test_malformed_chunk_is_retried_and_counted(scripted_server, clients):
    scripted_server.script(Reply(text="a b c", malformed_after=1), Reply(text="fine reply"))
    client = make(clients, scripted_server)
    resets: list[str] = []
    done = await client.complete(ASK, on_retry=resets.append)
    assert done.text == "fine reply"
    assert done.retries == 1 and resets == ["malformed"]


async def test_error_event_in_the_stream_is_retried_then_reported(scripted_server, clients):
    event = {"message": "model crashed", "type": "server_error"}
    scripted_server.script(*[Reply(text="a b", error_event=event, error_after=1)] * 3)
    client = make(clients, scripted_server)
    with pytest.raises(ModelReplyError, match="error event: model crashed.*3 times"):
        await client.complete(ASK)


async def test_empty_reply_is_retried_once_then_used(scripted_server, clients):
    scripted_server.script(Reply(text=""), Reply(text="hello"))
    done = await make(clients, scripted_server).complete(ASK)
    assert done.text == "hello" and done.retries == 1


async def test_idle_timeout_gives_up_on_a_silent_server(scripted_server, clients):
    scripted_server.script(*[Reply(text="a b c", chunk_delay=3.0)] * 3)
    client = make(clients, scripted_server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(ServerUnreachable, match="sent no text for 0.5 s"):
        await client.complete(ASK)
    assert time.monotonic() - started < 6


async def test_slow_but_live_stream_outlasts_the_idle_timeout(scripted_server, clients):
    scripted_server.script(Reply(text="w " * 12, chunk_delay=0.1))  # 1.2 s in all
    client = make(clients, scripted_server, timeout=0.5)
    done = await client.complete(ASK)
    assert done.text.split() == ["w"] * 12


async def test_context_window_is_learned_from_the_server(clients):
    with ScriptedServer(context_window=3000) as server:
        server.script(Reply(text="ok"))
        client = make(clients, server)
        await client.complete(ASK, max_output_tokens=8000)
        assert client.context_window == 3000
        assert server.chat_requests[0].body["max_completion_tokens"] < 3000


async def test_context_window_defaults_when_the_server_does_not_say(scripted_server, clients):
    scripted_server.script(Reply(text="ok"))
    client = make(clients, scripted_server)
    await client.complete(ASK)
    assert client.context_window == 16_384


async def test_reply_cap_is_lowered_to_what_the_token_budget_leaves(scripted_server, clients):
    scripted_server.script(Reply(text="ok", usage=(100, 10)), Reply(text="ok"))
    client = make(clients, scripted_server, budget=Budget(max_tokens=2000))
    await client.complete(ASK, max_output_tokens=4096)
    await client.complete(ASK, max_output_tokens=4096)
    caps = [r.body["max_completion_tokens"] for r in scripted_server.chat_requests]
    assert caps[0] < 2000 and caps[1] < 2000 - 110  # never a reply that could overspend


async def test_calls_in_flight_together_never_overspend_the_token_budget(scripted_server, clients):
    """Steps prepared side by side ask the model at once (issue 35): each call reserves its
    prompt and reply cap before it is sent, so three calls that each fit an empty budget but
    not all together cannot all go. A budget for two such calls sends two; the third is refused
    before it is made, and the session never spends past its cap."""
    gate = Gate()
    scripted_server.script(*[Reply(text="ok", usage=(20, 500), hold=gate) for _ in range(2)])
    client = make(clients, scripted_server, budget=Budget(max_tokens=1200))
    asks = [asyncio.create_task(client.complete(ASK, max_output_tokens=500)) for _ in range(3)]
    await gate.arrived()
    done, _ = await asyncio.wait(asks, timeout=REACHED, return_when=asyncio.FIRST_COMPLETED)
    refused = done.pop()
    with pytest.raises(BudgetExceeded, match="calls in flight"):
        refused.result()
    gate.open()
    replies = await asyncio.gather(*(a for a in asks if a is not refused))
    assert [r.text for r in replies] == ["ok", "ok"]
    assert len(scripted_server.chat_requests) == 2
    assert client.ledger.total_tokens == 1040 <= 1200


async def test_a_finished_call_gives_back_what_it_did_not_use(scripted_server, clients):
    """A reservation is only held while the call is in flight: once the reply is in, the
    ledger counts what it truly used, so a sequence of calls spends the whole budget."""
    scripted_server.script(*[Reply(text="ok", usage=(20, 100)) for _ in range(3)])
    client = make(clients, scripted_server, budget=Budget(max_tokens=1300))
    for _ in range(3):
        await client.complete(ASK, max_output_tokens=500)
    assert client.ledger.total_tokens == 360
    assert client.ledger.reserved_tokens == 0


async def test_calls_in_flight_count_against_the_money_budget(scripted_server, clients):
    """Money is known only once a reply is in, so a call in flight counts as spent at its
    reply cap's price: with $0.009 to spend and calls that may cost $0.005 each, a second call
    still goes (nothing spent yet, as before) but a third waits for nothing: it is refused."""
    gate = Gate()
    scripted_server.script(*[Reply(text="ok", usage=(5, 100), hold=gate) for _ in range(2)])
    client = make(clients, scripted_server, model="gpt-4o", budget=Budget(max_usd=0.009))
    asks = [asyncio.create_task(client.complete(ASK, max_output_tokens=500)) for _ in range(3)]
    await gate.arrived()
    done, _ = await asyncio.wait(asks, timeout=REACHED, return_when=asyncio.FIRST_COMPLETED)
    with pytest.raises(BudgetExceeded, match=r"held by calls in flight of \$0\.0090"):
        done.pop().result()
    gate.open()
    await asyncio.gather(*(a for a in asks if not a.done()))
    assert len(scripted_server.chat_requests) == 2 and client.ledger.reserved_usd == 0
