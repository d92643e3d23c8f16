"""The model's context window learned from what each common local server tells (issue 21 §3),
with nothing set in the config: the scripted server answers each server's discovery endpoints
with that server's own shapes (tests/server_flavours.py). Real openai client, real HTTP."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tests.server_flavours import TRAINED, Flavour
from tui_engineer.llm import ContextWindowExceeded, ModelClient

ASK = [{"role": "user", "content": "Plan the work."}]


def make(clients: list[ModelClient], server: ScriptedServer, **kw: Any) -> ModelClient:
    client = ModelClient(
        model=server.models[0], base_url=server.base_url, api_key="k", max_retries=0, **kw
    )
    clients.append(client)
    return client


def paths(server: ScriptedServer) -> list[str]:
    return [f"{r.method} {r.path}" for r in server.requests]


async def test_llama_server_window_is_n_ctx_in_props_not_the_training_length(clients):
    with ScriptedServer(flavour="llama.cpp", context_window=4096) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 4096
    assert client.window_report.source == "llama.cpp's server: n_ctx in /props"
    assert TRAINED != 4096  # its /v1/models meta.n_ctx_train was there to be misread


async def test_vllm_window_is_max_model_len_in_its_model_list(clients):
    with ScriptedServer(flavour="vllm", context_window=8192, models=["Qwen/Qwen2.5-7B"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 8192
    assert "max_model_len" in client.window_report.describe()
    assert paths(server) == ["GET /v1/models"]  # its own list says it: nothing else asked


async def test_callers_asking_at_once_share_one_asking_of_the_server(clients):
    """The session's start notice and its first prompt ask side by side: the server is asked
    once."""
    with ScriptedServer(flavour="vllm", context_window=8192, models=["Qwen/Qwen2.5-7B"]) as server:
        client = make(clients, server)
        both = await asyncio.gather(client.learn_context_window(), client.learn_context_window())
    assert both == [8192, 8192]
    assert paths(server) == ["GET /v1/models"]


async def test_the_model_list_read_by_the_start_check_is_not_asked_again(clients):
    with ScriptedServer(flavour="vllm", context_window=8192, models=["Qwen/Qwen2.5-7B"]) as server:
        client = make(clients, server)
        await client.check_connection()  # a session's start: the server serves the model
        assert await client.learn_context_window() == 8192
    assert paths(server) == ["GET /v1/models"]


async def test_lm_studio_window_is_the_loaded_length_not_the_models_maximum(clients):
    with ScriptedServer(flavour="lmstudio", context_window=8192, models=["gemma-3-4b"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 8192
    assert "LM Studio" in client.window_report.source
    assert not client.window_report.warning


async def test_lm_studio_before_loading_assumes_little_and_says_so(clients):
    flavour = Flavour("lmstudio", 8192, loaded=False)
    with ScriptedServer(flavour=flavour, context_window=8192, models=["gemma-3-4b"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 4096  # not its 131,072 maximum
    assert "not loaded" in client.window_report.source
    assert "context_window" in client.window_report.warning


async def test_ollama_window_of_a_loaded_model_and_its_silent_truncation_warned(clients):
    with ScriptedServer(flavour="ollama", context_window=8192, models=["gemma3:270m"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 8192
    report = client.window_report
    assert "/api/ps" in report.source
    assert "without an error" in report.warning and "OLLAMA_CONTEXT_LENGTH" in report.warning


async def test_ollama_window_from_the_modelfile_when_the_model_is_not_loaded(clients):
    flavour = Flavour("ollama", 8192, loaded=False)
    with ScriptedServer(flavour=flavour, context_window=8192, models=["gemma3:270m"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 8192
    assert "num_ctx in the model's Modelfile" in client.window_report.source


async def test_ollama_default_when_nothing_sets_num_ctx(clients):
    flavour = Flavour("ollama", 4096, loaded=False, modelfile_num_ctx=False)
    with ScriptedServer(flavour=flavour, context_window=4096, models=["gemma3:270m"]) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 4096  # not gemma3's 131,072
    assert "default" in client.window_report.source and client.window_report.warning


async def test_a_prompt_ollama_would_truncate_silently_is_not_sent(clients):
    flavour = Flavour("ollama", 1000, loaded=False)
    with ScriptedServer(flavour=flavour, context_window=1000, models=["gemma3:270m"]) as server:
        client = make(clients, server)
        big = [{"role": "user", "content": "x" * 8000}]  # ~2000 tokens: Ollama would cut it
        with pytest.raises(ContextWindowExceeded, match="context window of 1,000 tokens"):
            await client.complete(big, max_output_tokens=100)
        assert server.chat_requests == []


async def test_llama_cpp_python_window_from_its_answer_to_an_oversized_prompt(clients):
    model = "/models/gemma-3-270m.gguf"
    with ScriptedServer(flavour="llama-cpp-python", context_window=4096, models=[model]) as srv:
        srv.script(Reply(text="fine"), Reply(text="fine"))
        client = make(clients, srv)
        await client.complete(ASK, max_output_tokens=8192)
        await client.complete(ASK, max_output_tokens=8192)
    assert client.context_window == 4096
    assert "llama-cpp-python" in client.window_report.source
    probes = [r for r in srv.requests if r.path == "/v1/completions"]
    assert len(probes) == 1  # asked once a session
    assert probes[0].body["max_tokens"] == 1
    caps = [r.body["max_completion_tokens"] for r in srv.chat_requests]
    assert all(cap < 4096 for cap in caps)  # each reply fits what the window leaves


async def test_a_hosted_api_that_tells_nothing_leaves_the_default_assumed(clients):
    with ScriptedServer(report_window=False) as server:
        client = make(clients, server)
        assert await client.learn_context_window() == 16_384
    assert client.window_report.source.startswith("assumed")
    assert "Set context_window" in client.window_report.warning


async def test_a_remote_server_that_tells_nothing_is_asked_in_one_round_not_one_by_one(clients):
    """Each request to a hosted API is a round trip; the first prompt waits for the asking."""
    with ScriptedServer(report_window=False, answer_delay=0.8) as server:
        client = make(clients, server)
        started = time.monotonic()
        assert await client.learn_context_window() == 16_384
        took = time.monotonic() - started
    asked = {r.path for r in server.requests}
    assert {"/props", "/api/version", "/api/v0/models"} <= asked  # each server's own endpoint
    assert took < 2.6  # the list, then the three at once (1.6 s); one by one: 3.2 s


async def test_a_configured_window_asks_the_server_nothing(clients):
    with ScriptedServer(flavour="llama-cpp-python", context_window=4096) as server:
        client = make(clients, server, context_window=2048)
        assert await client.learn_context_window() == 2048
    assert server.requests == []
    assert client.window_report.describe() == "2,048 tokens (context_window in the config)"


async def test_a_reply_the_server_cut_short_of_the_cap_is_not_continued(clients):
    """A server that tells nothing lowers the reply's limit to what its window leaves (as
    llama-cpp-python does) and ends it with "length": continuing it would only overflow."""
    with ScriptedServer(context_window=1000, report_window=False) as server:
        server.script(Reply(text="word " * 2000))
        client = make(clients, server)  # the window: assumed 16,384
        with pytest.raises(ContextWindowExceeded, match="context window") as err:
            await client.complete(ASK, max_output_tokens=4000)
        assert len(server.chat_requests) == 1  # no continuation into a longer prompt
    assert client.context_window <= 1000  # learned where the server cut the reply
    assert f"({client.context_window:,} tokens" in str(err.value)


async def test_a_reply_is_not_continued_into_a_window_that_cannot_hold_it(clients):
    """The issue's plan call: cut at its cap, then continued into a longer prompt that the
    window could not hold. A continuation needs room for a reply as long as the cut one."""
    with ScriptedServer(context_window=3000) as server:
        server.script(Reply(text="word " * 1500, finish_reason="length", usage=(20, 1500)))
        client = make(clients, server)
        with pytest.raises(ContextWindowExceeded, match="cannot hold a continuation"):
            await client.complete(ASK, max_output_tokens=1500)
        assert len(server.chat_requests) == 1


async def test_a_reply_is_continued_where_the_window_holds_it(clients):
    with ScriptedServer(context_window=8000) as server:
        server.script(
            Reply(text="word " * 100, finish_reason="length", usage=(20, 100)),
            Reply(text="end", usage=(150, 1)),
        )
        client = make(clients, server)
        done = await client.complete(ASK, max_output_tokens=100)
        assert done.continued == 1 and done.text.endswith("end")
