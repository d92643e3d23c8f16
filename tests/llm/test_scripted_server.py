"""The scripted server itself, spoken to with raw HTTP: wire format, faults and clean shutdown."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.scripted_server import Gate, Reply, ScriptedServer


def post(server: ScriptedServer, body: dict[str, Any]) -> http.client.HTTPResponse:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=5)
    conn.request("POST", f"{url.path}/chat/completions", json.dumps(body), {"Authorization": "x"})
    return conn.getresponse()


def sse_payloads(response: http.client.HTTPResponse) -> list[str]:
    text = response.read().decode()
    events = [e for e in text.split("\n\n") if e]
    assert all(e.startswith("data: ") for e in events)
    return [e.removeprefix("data: ") for e in events]


@pytest.fixture
def server():
    with ScriptedServer() as running:
        yield running


def test_stream_is_sse_with_done_and_usage_only_when_asked(server):
    server.script(Reply(text="a b", usage=(7, 2)), Reply(text="a b"))
    ask = {"model": "m", "messages": [{"role": "user", "content": "q"}], "stream": True}

    with_usage = sse_payloads(post(server, {**ask, "stream_options": {"include_usage": True}}))
    without = sse_payloads(post(server, ask))

    assert with_usage[-1] == "[DONE]" and without[-1] == "[DONE]"
    chunks = [json.loads(p) for p in with_usage[:-1]]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[:-1]) == "a b"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 7
    assert all("usage" not in json.loads(p) for p in without[:-1])


def test_non_stream_reply_carries_usage_and_finish_reason(server):
    server.script(Reply(text="whole", finish_reason="length", usage=(3, 1)))
    body = json.loads(post(server, {"model": "m", "messages": []}).read())
    assert body["choices"][0]["message"]["content"] == "whole"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}


def test_error_reply_has_openai_shape_and_retry_headers(server):
    server.script(Reply(status=429, retry_after=0.5))
    response = post(server, {"model": "m", "messages": []})
    assert response.status == 429
    assert response.getheader("retry-after-ms") == "500"
    assert json.loads(response.read())["error"]["code"] == "rate_limit_exceeded"


def test_requests_are_recorded_with_headers(server):
    server.script(Reply(text="ok"))
    post(server, {"model": "m", "messages": [{"role": "user", "content": "hello"}]}).read()
    seen = server.chat_requests[0]
    assert seen.messages[0]["content"] == "hello" and seen.headers["authorization"] == "x"


def test_callable_script_sees_the_request(server):
    server.script(lambda request: Reply(text=f"you said {request.messages[-1]['content']}"))
    body = json.loads(post(server, {"model": "m", "messages": [{"content": "hi"}]}).read())
    assert body["choices"][0]["message"]["content"] == "you said hi"


def test_request_with_nothing_scripted_fails_loudly():
    with ScriptedServer() as server:
        response = post(server, {"model": "m", "messages": [{"content": "surprise"}]})
        assert response.status == 500 and response.getheader("x-should-retry") == "false"
    with pytest.raises(AssertionError, match=r"(?s)nothing scripted.*surprise"):
        server.check()


def test_stop_is_prompt_even_with_a_slow_reply_in_flight():
    server = ScriptedServer().start()
    server.script(Reply(text="slow", delay=30))
    caller = threading.Thread(target=lambda: _ignore_errors(post, server, {"messages": []}))
    caller.start()
    while not server.requests:
        time.sleep(0.01)

    started = time.monotonic()
    server.stop()

    assert time.monotonic() - started < 2
    caller.join(timeout=5)
    assert not caller.is_alive()


def _ignore_errors(fn: Any, *args: Any) -> None:
    try:
        fn(*args).read()
    except OSError:
        pass


def test_a_held_reply_waits_for_the_test_to_open_its_gate(server):
    gate = Gate()
    server.script(Reply(text="a b c", hold=gate, hold_after=1))
    ask = {"model": "m", "messages": [], "stream": True}
    got: list[list[str]] = []
    caller = threading.Thread(target=lambda: got.append(sse_payloads(post(server, ask))))
    caller.start()

    assert gate.reached.wait(5)
    time.sleep(0.2)
    assert caller.is_alive()  # held after the first chunk: no clock decides when it ends
    gate.open()
    caller.join(timeout=5)

    chunks = [json.loads(p) for p in got[0][:-1] if p.startswith("{")]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == (
        "a b c"
    )


def test_a_stopped_server_cuts_a_held_reply_and_starts_again_on_the_same_port():
    server = ScriptedServer().start()
    gate = Gate()
    server.script(Reply(text="never", hold=gate), Reply(text="again"))
    url = server.base_url
    caller = threading.Thread(target=lambda: _ignore_errors(post, server, {"messages": []}))
    caller.start()
    assert gate.reached.wait(5)

    server.stop()
    caller.join(timeout=5)
    server.start()
    try:
        assert not caller.is_alive()
        assert server.base_url == url
        body = json.loads(post(server, {"model": "m", "messages": []}).read())
        assert body["choices"][0]["message"]["content"] == "again"
    finally:
        server.stop()
