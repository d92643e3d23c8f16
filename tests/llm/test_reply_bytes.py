"""Bytes a server sends that the API never promised (issue 52, part 4): a stream with a byte
that is not UTF-8, a `content` that is a number, `choices: null`; and a 429 whose Retry-After
is longer than the SDK waits. Each is a server's fault, asked again, then named; never a crash.
Real openai client, real HTTP, the scripted server."""

from __future__ import annotations

from typing import Any

import pytest

from tests.scripted_server import Reply, ScriptedServer
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tui_engineer.llm import LLMError, ModelClient, ModelReplyError

ASK = [{"role": "user", "content": "Say hello."}]
NOT_UTF8 = b'data: {"choices": [{"index": 0, "delta": {"content": "caf\xe9"}}]}\n\n'
NUMBER = b'data: {"choices": [{"index": 0, "delta": {"content": 42}}]}\n\n'
NO_CHOICES = b'data: {"id": "x", "object": "chat.completion.chunk", "choices": null}\n\n'


def make(clients: list[ModelClient], server: ScriptedServer, **kw: Any) -> ModelClient:
    kw.setdefault("timeout", 5.0)
    kw.setdefault("max_retries", 0)
    client = ModelClient(model="local-model", base_url=server.base_url, api_key="sk-test-key", **kw)
    clients.append(client)
    return client


@pytest.mark.parametrize("raw", [NOT_UTF8, NUMBER, NO_CHOICES], ids=["utf8", "number", "null"])
async def test_a_broken_chunk_once_is_asked_again(scripted_server, clients, raw):
    scripted_server.script(Reply(text="a b c", raw_event=raw, raw_after=1), Reply(text="hi there"))
    shown: list[str] = []
    resets: list[str] = []
    done = await make(clients, scripted_server).complete(
        ASK, on_text=shown.append, on_retry=resets.append, on_reset=shown.clear
    )
    assert done.text == "hi there" and resets == ["malformed"]
    assert shown == ["hi ", "there"]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (NOT_UTF8, "a byte that is not UTF-8"),
        (NUMBER, "a 'content' that is not text (int)"),
        (NO_CHOICES, "a chunk whose 'choices' is null"),
    ],
    ids=["utf8", "number", "null"],
)
async def test_a_broken_chunk_every_time_is_named_as_the_servers(
    scripted_server, clients, raw, said
):
    scripted_server.script(*[Reply(text="a b c", raw_event=raw, raw_after=1)] * 3)
    with pytest.raises(ModelReplyError) as err:
        await make(clients, scripted_server).complete(ASK)
    text = str(err.value)
    assert said in text and "3 times in a row" in text
    assert "NoneType" not in text and "subscriptable" not in text


async def test_a_number_for_content_in_a_whole_reply_is_asked_again(clients):
    with ScriptedServer(streaming=False) as server:
        server.script(Reply(text=7, usage=(5, 1)), Reply(text="fine"))  # type: ignore[arg-type]
        done = await make(clients, server).complete(ASK)
    assert done.text == "fine" and done.retries == 1


async def test_a_429_asking_for_a_long_wait_says_the_wait(scripted_server, clients):
    """The SDK does not wait when Retry-After is over 120 s: one attempt, not 'up to 4'."""
    scripted_server.script(Reply(status=429, retry_after=600))
    client = make(clients, scripted_server, max_retries=3)
    with pytest.raises(LLMError) as err:
        await client.complete(ASK)
    text = str(err.value)
    assert "asked to wait 600 s (10 min)" in text and "up to 4 attempts" not in text
    assert len(scripted_server.chat_requests) == 1
