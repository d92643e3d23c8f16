"""Prompt sizes come from the server's own tokenizer where it has one (llama.cpp's /tokenize),
else from characters / 4. Code runs denser than 4 characters per token, so with a small window
the estimate lets through prompts the server then refuses."""

from __future__ import annotations

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.llm import ContextWindowExceeded, LLMError, ModelClient

WINDOW = 2048
# ~6,600 characters: 1,650 tokens by chars / 4 (fits 2,048 with room for a reply), but 2,200 by
# a tokenizer that counts a token per 3 characters (does not fit).
CODE = [{"role": "user", "content": "x = compute(a, b)  # step\n" * 254}]


def client_for(server: ScriptedServer, **kwargs: object) -> ModelClient:
    return ModelClient(model="test-model", base_url=server.base_url, api_key="k", **kwargs)


async def test_a_prompt_over_the_window_by_the_servers_count_is_not_sent() -> None:
    with ScriptedServer(context_window=WINDOW, tokens_per_char=1 / 3) as server:
        client = client_for(server)
        try:
            with pytest.raises(ContextWindowExceeded, match=r"about 2,2\d\d tokens"):
                await client.complete(CODE, max_output_tokens=256)
        finally:
            await client.aclose()
        assert server.chat_requests == []  # refused here, with the real size, not by the server


async def test_without_a_tokenizer_endpoint_the_estimate_is_used() -> None:
    """The same prompt to a server with no /tokenize: chars / 4 says it fits, so it is sent (and
    this server, counting chars / 4 too, answers). Its model list says it is no server with a
    tokenizer endpoint, so none is asked for."""
    with ScriptedServer(context_window=WINDOW) as server:
        server.script(Reply(text="answered"), Reply(text="again"))
        client = client_for(server)
        try:
            assert (await client.complete(CODE, max_output_tokens=256)).text == "answered"
            await client.complete(CODE, max_output_tokens=256)
        finally:
            await client.aclose()
        assert [r.path for r in server.requests if "tokenize" in r.path] == []


async def test_usage_without_server_numbers_counts_the_prompt_with_the_servers_tokenizer() -> None:
    with ScriptedServer(tokens_per_char=1 / 3) as server:
        server.script(Reply(text="done", report_usage=False))
        client = client_for(server)
        try:
            await client.complete(CODE, max_output_tokens=64)
        finally:
            await client.aclose()
        [call] = client.ledger.calls
        assert call.estimated
        assert call.prompt_tokens == len(CODE[0]["content"]) // 3 + 4  # + the message framing


async def test_each_message_is_counted_once_per_session() -> None:
    with ScriptedServer(tokens_per_char=1 / 3) as server:
        server.script(Reply(text="one"), Reply(text="two"))
        client = client_for(server)
        conversation = list(CODE)
        try:
            await client.complete(conversation, max_output_tokens=64)
            conversation += [{"role": "assistant", "content": "one"}]
            conversation += [{"role": "user", "content": "and now?"}]
            await client.complete(conversation, max_output_tokens=64)
        finally:
            await client.aclose()
        asked = [r.body["content"] for r in server.requests if r.path == "/tokenize"]
        assert asked == [CODE[0]["content"], "one", "and now?"]


async def test_a_server_that_is_down_still_gives_the_usual_error() -> None:
    from tests.scripted_server import unused_base_url

    client = ModelClient(model="m", base_url=unused_base_url(), api_key="k", max_retries=0)
    try:
        with pytest.raises(LLMError):
            await client.complete(CODE, max_output_tokens=64)
    finally:
        await client.aclose()


@pytest.mark.parametrize(
    ("flavour", "probes"),
    [(None, []), ("vllm", []), ("llama-cpp-python", ["/extras/tokenize/count"])],
)
async def test_only_a_server_with_a_tokenizer_is_asked_once_per_server(
    flavour: str | None, probes: list[str]
) -> None:
    """Three sessions (clients) in one process: a hosted API (the plain server, vLLM) is sent
    no token-count probe; llama-cpp-python is asked at its own endpoint only. Its kind is read
    once from its model list, whether the window is discovered or configured."""
    ratio = 1 / 3 if flavour else None
    with ScriptedServer(flavour=flavour, context_window=WINDOW, tokens_per_char=ratio) as server:
        server.script(*(Reply(text="ok") for _ in range(3)))
        for window in (None, WINDOW, None):
            client = client_for(server, context_window=window)
            try:
                await client.complete([{"role": "user", "content": "hi"}], max_output_tokens=8)
            finally:
                await client.aclose()
        asked = [r.path for r in server.requests if "tokenize" in r.path]
        assert asked == probes * (3 if probes else 0)  # each session counts its prompt there
        # The list was read by the two discoveries only: not again for the configured one.
        assert [r.path for r in server.requests].count("/v1/models") == 2


async def test_a_tokenizer_server_started_where_another_server_was_is_asked() -> None:
    """One process (an editor's agent lives for days), two sessions at one address: first a
    server with no tokenizer, then, after a restart on the same port, llama.cpp's. The second
    session's model list is read afresh, so its prompts are counted by the server."""
    with ScriptedServer() as plain:
        plain.script(Reply(text="one"))
        port = int(plain.base_url.rsplit(":", 1)[1].split("/")[0])
        client = client_for(plain)
        try:
            await client.complete(CODE, max_output_tokens=64)
        finally:
            await client.aclose()
    with ScriptedServer(port=port, tokens_per_char=1 / 3) as llama:
        llama.script(Reply(text="two"))
        client = client_for(llama)
        try:
            await client.complete(CODE, max_output_tokens=64)
        finally:
            await client.aclose()
        asked = [r.body["content"] for r in llama.requests if r.path == "/tokenize"]
        assert asked == [CODE[0]["content"]]
