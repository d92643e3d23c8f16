"""A scripted OpenAI-compatible HTTP server for tests: real HTTP on 127.0.0.1, no mocks.

Usage (the `scripted_server` fixture starts one per test and stops it afterwards):

    def test_something(scripted_server):
        scripted_server.script(Reply(text="hello"), Reply(status=429, retry_after=0.01))
        client = ModelClient(model="test-model", base_url=scripted_server.base_url, api_key="k")
        ...
        assert scripted_server.chat_requests[0].messages[-1]["content"] == "..."

Endpoints:
- `POST /v1/chat/completions`: answers with the next scripted reply, streamed as SSE
  (`data: {...}` chunks, `data: [DONE]`, a usage chunk when `stream_options.include_usage`) or as
  one JSON object, with `usage` unless the reply says not to report it.
- `GET /v1/models`: the model list in `server.models` (faults via `script_models`).

A script entry is a `Reply` or a callable `(RecordedRequest) -> Reply`. Faults are fields of
`Reply`: an HTTP status with an OpenAI-style error body (and Retry-After), a delay, a stream
dropped after N chunks, any finish_reason, custom usage. Server-wide switches: `streaming=False`
rejects `stream=true` with 400 like some servers do; `api_key` makes it check the bearer token;
`context_window=N` (tokens, counted as chars / 4) makes it behave like llama.cpp: a prompt over
the window is rejected with 400 (`overflow="reject"`) or its stream dropped (`overflow="drop"`),
a reply is cut with finish_reason "length" where prompt + reply reach the window, and
`GET /props` reports `n_ctx`. `flavour="llama-cpp-python"` (or "llama.cpp", "vllm",
"lmstudio", "ollama", or a `Flavour` for its options) makes the discovery endpoints, the model
list and a prompt over the window answer as that server does instead
(tests/server_flavours.py). `tokens_per_char=r` gives it a tokenizer like llama-server's
(`POST /tokenize` → `{"tokens": [...]}`, int(chars × r) tokens per text, also used for the window
check): a real tokenizer counts code denser than chars / 4. Reply faults inside a stream:
`malformed_after` sends a chunk that is not JSON, `error_event` an `{"error": ...}` event, after
that many content chunks; `raw_event` any bytes at all (after `raw_after` content chunks);
`stall="keep-alive"` or `"empty"` a stream that never ends, live but with no text.

Tools (the OpenAI tools API): `Reply(tool_calls=[(name, arguments), ...])` answers with those
tool calls (finish_reason "tool_calls"; streamed as OpenAI does, the id and name first, then
the arguments); `request.tools` is what a request offered. `tools=False` makes the server refuse
a request with tools (400 "… does not support tools"), as servers and models without tool
support do.

A real model's timing without a clock: `Reply(hold=gate)` holds the reply until the test calls
`gate.open()` (`hold_after=n`: after n content chunks of the stream; default before any byte of
the response). `gate.reached` is set when the request gets there (`await gate.arrived()` from
async tests), so a test can act while the model "thinks". Stopping the server cuts a held reply.

A chat request arriving with the script empty is answered with a non-retryable 500 and recorded
in `server.unexpected`; the fixture turns that into a test error at teardown.

Note on retries: the openai SDK honours `retry-after-ms`/`Retry-After` only when > 0; without one
it backs off 0.5 s, 1 s, 2 s... Give fault replies a small `retry_after` (e.g. 0.01) for fast tests.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.server_flavours import Flavour, text_tokens

__all__ = [
    "Gate",
    "RecordedRequest",
    "Reply",
    "ScriptedServer",
    "scripted_server",
    "unused_base_url",
]


@dataclass
class RecordedRequest:
    """One request as the server saw it. Header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages", []))

    @property
    def stream(self) -> bool:
        return bool((self.body or {}).get("stream"))

    @property
    def model(self) -> str | None:
        return (self.body or {}).get("model")

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered (OpenAI shape), [] when none."""
        return list((self.body or {}).get("tools") or [])


# Default OpenAI-style error bodies per status, so a bare `Reply(status=401)` looks real.
_DEFAULT_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Bad request.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to use this model.", "invalid_request_error", None),
    404: (
        "The model does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    ),
    429: ("Rate limit reached. Please try again later.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    503: ("The server is overloaded.", "server_error", None),
}


class Gate:
    """Holds a scripted reply until the test opens it (see `Reply.hold`)."""

    def __init__(self) -> None:
        self.reached = threading.Event()  # set when a request is held here
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    async def arrived(self, timeout: float = 30.0) -> None:
        """Wait (without blocking the event loop) until a request is held here."""
        import asyncio

        if not await asyncio.to_thread(self.reached.wait, timeout):
            raise AssertionError(f"no request reached the gate within {timeout:g} s")

    def hold(self, stopping: threading.Event) -> bool:
        """In the handler thread: wait until opened; False if the server stops first."""
        self.reached.set()
        while not self._open.wait(0.02):
            if stopping.is_set():
                return False
        return True


@dataclass
class Reply:
    """One scripted answer. Defaults give a normal, successful reply.

    text / chunks: the reply text; streamed in `chunks` if given, else split at word boundaries.
    finish_reason: e.g. "stop" or "length".
    usage: (prompt_tokens, completion_tokens) to report; None = chars/4 of request and text.
    report_usage: False mimics servers that never send usage.
    status: non-200 answers with an OpenAI-style error body (`error` overrides its fields:
        message, type, code); `retry_after` (seconds) adds Retry-After and retry-after-ms.
    delay: seconds to wait before answering (for timeouts); chunk_delay: between SSE chunks.
    drop_after: close the connection after this many content chunks (stream) or before any
        response at all (non-stream).
    hold: a Gate the reply waits at until the test opens it; hold_after: after that many
        content chunks of a stream (None: before the response starts).
    html_page: answer with an HTML page and status 200, as a proxy's passing error page does.
    """

    text: str = ""
    chunks: Sequence[str] | None = None
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None
    report_usage: bool = True
    model: str | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    retry_after: float | None = None
    delay: float = 0.0
    chunk_delay: float = 0.0
    drop_after: int | None = None
    malformed_after: int | None = None
    error_event: dict[str, Any] | None = None  # sent after `error_after` content chunks
    error_after: int = 0
    hold: Gate | None = None
    hold_after: int | None = None
    # The model calls tools: (name, arguments as a dict) each; finish_reason "tool_calls".
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    # A proxy's or gateway's error page, answered with status 200 instead of this reply.
    html_page: bool = False
    # Bytes sent as they are (an SSE event the API never promised: not UTF-8, a number for
    # `content`, `choices: null`) after `raw_after` content chunks of a stream.
    raw_event: bytes | None = None
    raw_after: int = 0
    # After its content, a stream that never finishes: "keep-alive" sends SSE comments, "empty"
    # empty deltas, every `chunk_delay` (or 0.05 s) until the server stops.
    stall: str | None = None

    def pieces(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        return re.findall(r"\S+\s*|\s+", self.text)  # words with their trailing space

    def error_body(self) -> dict[str, Any]:
        message, kind, code = _DEFAULT_ERRORS.get(self.status, ("Error.", "server_error", None))
        error = {"message": message, "type": kind, "param": None, "code": code}
        error.update(self.error or {})
        return {"error": error}


Script = Reply | Callable[[RecordedRequest], Reply]
Answer = tuple[int, Any]


class ScriptedServer:
    """The server object tests talk to. Thread-safe: the HTTP side runs in handler threads."""

    def __init__(
        self,
        *,
        models: Sequence[str] = ("test-model",),
        streaming: bool = True,
        api_key: str | None = None,
        port: int = 0,
        context_window: int | None = None,
        overflow: str = "reject",
        report_window: bool = True,
        tokens_per_char: float | None = None,
        flavour: str | Flavour | None = None,
        html_page: bool = False,
        tools: bool = True,
        answer_delay: float = 0.0,
    ) -> None:
        self.models = list(models)
        self.answer_delay = answer_delay  # every GET waits this long: a remote server's RTT
        # False: a request offering tools is refused with 400, as servers and models without
        # tool support do (Ollama: "... does not support tools").
        self.tools = tools
        # True: every request is answered 200 with a web page (a web UI, a proxy's login
        # page, a base URL without /v1), as such servers do.
        self.html_page = html_page
        if isinstance(flavour, str):
            flavour = Flavour(flavour, context_window)
        self.flavour = flavour  # None: the plain scripted server (llama.cpp-like /props)
        self.context_window = context_window
        self.overflow = overflow  # "reject" (HTTP 400) or "drop" (cut the stream)
        self.report_window = report_window  # False: GET /props is a 404, like most servers
        self.tokens_per_char = tokens_per_char  # None: no POST /tokenize (most servers)
        self.port = port  # 0: any free port
        self.streaming = streaming
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[str] = []
        self._script: deque[Script] = deque()
        self._models_script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ----- test-facing API

    def script(self, *replies: Script) -> ScriptedServer:
        """Queue replies for the next chat requests, in order."""
        with self._lock:
            self._script.extend(replies)
        return self

    def script_models(self, *replies: Reply) -> ScriptedServer:
        """Queue answers for GET /v1/models (only `status`/`error`/`delay` matter); when the
        queue is empty the model list is returned."""
        with self._lock:
            self._models_script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._script)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> ScriptedServer:
        """Start serving; after `stop()`, again on the same port (a restarted model server)."""
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", self.port), _Handler, self)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and join every handler thread."""
        if self._httpd is None:
            return
        self._stopping.set()
        self._httpd.shutdown()
        with self._lock:
            for conn in self._connections:
                _shutdown_quietly(conn)
        self._httpd.server_close()  # joins handler threads (block_on_close)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None

    def check(self) -> None:
        """Fail if any chat request arrived with nothing scripted for it."""
        if self.unexpected:
            raise AssertionError(
                "scripted server received requests with nothing scripted:\n"
                + "\n".join(self.unexpected)
            )

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ----- used by the handler threads

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_chat_reply(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            entry = self._script.popleft() if self._script else None
            if entry is None:
                last = request.messages[-1]["content"] if request.messages else ""
                self.unexpected.append(
                    f"request #{len(self.requests)} to {request.path} (last message: {last!r:.80})"
                )
                return None
        return entry(request) if callable(entry) else entry

    def _next_models_reply(self) -> Reply | None:
        with self._lock:
            return self._models_script.popleft() if self._models_script else None

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _wait(self, seconds: float) -> bool:
        """Sleep unless the server is stopping; True if it should go on."""
        return not self._stopping.wait(seconds) if seconds > 0 else True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = False  # joined by server_close, so stop() is clean
    block_on_close = True

    def __init__(self, address: tuple[str, int], handler: type, scripted: ScriptedServer) -> None:
        self.scripted = scripted
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, like real servers
    timeout = 60  # backstop for idle keep-alive connections (stop() cuts them anyway)
    server: _HTTPServer

    @property
    def scripted(self) -> ScriptedServer:
        return self.server.scripted

    def setup(self) -> None:
        super().setup()
        self.scripted._track(self.connection, True)

    def finish(self) -> None:
        self.scripted._track(self.connection, False)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output clean

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (e.g. its timeout); fine

    # ----- routes

    def do_GET(self) -> None:
        request = self._read_request()
        if not self.scripted._wait(self.scripted.answer_delay):
            return None
        if self.scripted.html_page:
            return self._send_html()
        flavour = self.scripted.flavour
        if flavour is not None:
            answer = flavour.get(request.path, self.scripted.models)
            if answer is not None:
                return self._send_json(*answer)
        if request.path.rstrip("/").endswith("/props") and self.scripted.report_window:
            n_ctx = self.scripted.context_window
            if n_ctx is None:
                return self._send_json(404, {"error": {"message": "no route /props"}})
            return self._send_json(200, {"default_generation_settings": {"n_ctx": n_ctx}})
        if not request.path.rstrip("/").endswith("/models"):
            return self._send_json(404, {"error": {"message": f"no route {request.path}"}})
        reply = self.scripted._next_models_reply()
        if reply is not None:
            if not self.scripted._wait(reply.delay):
                return None
            if reply.status != 200:
                return self._send_error(reply)
        data = [
            flavour.model_entry(m)
            if flavour is not None
            else {"id": m, "object": "model", "created": 0, "owned_by": self._owner()}
            for m in self.scripted.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def _owner(self) -> str:
        """Who lists the models: llama.cpp's server when it tokenizes (POST /tokenize)."""
        return "scripted" if self.scripted.tokens_per_char is None else "llamacpp"

    def do_POST(self) -> None:
        request = self._read_request()
        if self.scripted.html_page:
            return self._send_html()
        ratio = self.scripted.tokens_per_char
        if request.path == "/tokenize" and ratio is not None:
            content = str((request.body or {}).get("content", ""))
            return self._send_json(200, {"tokens": list(range(int(len(content) * ratio)))})
        flavour = self.scripted.flavour
        if flavour is not None:  # a discovery POST, or llama-cpp-python's text completions
            answer = flavour.post(request.path, request.body or {}, self.scripted.tokens_per_char)
            if answer is not None:
                return self._send_json(*answer)
        if not request.path.endswith("/chat/completions"):
            return self._send_json(404, {"error": {"message": f"no route {request.path}"}})
        if not self._authorized(request):
            return self._send_error(Reply(status=401))
        if request.stream and not self.scripted.streaming:
            return self._send_error(
                Reply(
                    status=400,
                    error={
                        "message": "Streaming is not supported; set stream to false.",
                        "param": "stream",
                    },
                )
            )
        if request.tools and not self.scripted.tools:
            return self._send_error(
                Reply(
                    status=400,
                    error={"message": f"{request.model} does not support tools"},
                )
            )
        reply = self.scripted._next_chat_reply(request)
        if reply is None:
            return self._send_json(
                500,
                {"error": {"message": "scripted server: nothing scripted for this request"}},
                {"x-should-retry": "false"},
            )
        if not self.scripted._wait(reply.delay):
            return None
        if reply.hold is not None and reply.hold_after is None:
            if not reply.hold.hold(self.scripted._stopping):
                return self._drop()
        if reply.status != 200:
            return self._send_error(reply)
        if reply.html_page:
            return self._send_html()
        window = self.scripted.context_window
        if window is not None and flavour is not None:
            reply = self._as_flavour(flavour, request, reply, window)
            if reply is None:
                return None
        elif window is not None:
            prompt = _prompt_tokens(request, self.scripted.tokens_per_char)
            if prompt > window:
                if self.scripted.overflow != "drop":
                    return self._send_error(_overflow_reply(prompt, window))
                reply = replace(reply, drop_after=0)  # the stream starts, then is cut
            else:
                reply = _cut_at_window(reply, window - prompt)
        if request.stream:
            return self._stream(request, reply)
        return self._complete(request, reply)

    def _as_flavour(
        self, flavour: Flavour, request: RecordedRequest, reply: Reply, window: int
    ) -> Reply | None:
        """The reply as that server gives it for this prompt: its error for a prompt over the
        window (None once sent), else cut where the window is full (Ollama: never cut)."""
        prompt = _prompt_tokens(request, self.scripted.tokens_per_char)
        cap = (request.body or {}).get("max_tokens")
        answer = flavour.overflow(prompt, request.stream, cap) if prompt > window else None
        if flavour.name == "llama-cpp-python" and prompt == window:
            answer = flavour.overflow(prompt, request.stream, cap)
        if answer is None:
            return reply if flavour.name == "ollama" else _cut_at_window(reply, window - prompt)
        if answer[0] == "drop":
            return replace(reply, drop_after=0)  # the stream starts, then is cut
        self._send_json(*answer)
        return None

    # ----- replies

    def _complete(self, request: RecordedRequest, reply: Reply) -> None:
        if reply.drop_after is not None:
            return self._drop()
        body: dict[str, Any] = {
            **self._envelope(request, reply, "chat.completion"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text, **_tool_calls(reply)},
                    "finish_reason": "tool_calls" if reply.tool_calls else reply.finish_reason,
                }
            ],
        }
        if reply.report_usage:
            body["usage"] = _usage(request, reply)
        self._send_json(200, body)

    def _stream(self, request: RecordedRequest, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        envelope = self._envelope(request, reply, "chat.completion.chunk")
        want_usage = reply.report_usage and bool(
            (request.body or {}).get("stream_options", {}).get("include_usage")
        )

        def event(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
            chunk = {
                **envelope,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }
            if want_usage:
                chunk["usage"] = None
            return chunk

        self._sse(event({"role": "assistant", "content": ""}, None))
        for sent, piece in enumerate(reply.pieces()):
            if reply.hold is not None and reply.hold_after == sent:
                if not reply.hold.hold(self.scripted._stopping):
                    return self._drop()
            if reply.drop_after is not None and sent >= reply.drop_after:
                return self._drop()
            if reply.malformed_after is not None and sent == reply.malformed_after:
                self._chunk(b'data: {"choices": [{"delta": \n\n')
            if reply.raw_event is not None and sent == reply.raw_after:
                self._chunk(reply.raw_event)
            if reply.error_event is not None and sent == reply.error_after:
                self._sse({"error": reply.error_event})
                self._chunk(b"")
                return None
            if not self.scripted._wait(reply.chunk_delay):
                return self._drop()
            self._sse(event({"content": piece}, None))
        if reply.drop_after is not None:
            return self._drop()  # drop_after >= number of chunks: cut before finish_reason
        while reply.stall is not None:
            if not self.scripted._wait(reply.chunk_delay or 0.05):
                return self._drop()
            if reply.stall == "keep-alive":
                self._chunk(b": keep-alive\n\n")
            else:
                self._sse(event({"content": ""}, None))
        for index, call in enumerate(_tool_calls(reply).get("tool_calls", [])):
            # As OpenAI streams them: id and name first, the arguments in a later piece.
            head = {**call, "index": index, "function": {"name": call["function"]["name"]}}
            self._sse(event({"tool_calls": [head]}, None))
            rest = {"index": index, "function": {"arguments": call["function"]["arguments"]}}
            self._sse(event({"tool_calls": [rest]}, None))
        self._sse(event({}, "tool_calls" if reply.tool_calls else reply.finish_reason))
        if want_usage:
            self._sse({**envelope, "choices": [], "usage": _usage(request, reply)})
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")  # end of chunked body

    def _envelope(self, request: RecordedRequest, reply: Reply, kind: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-scripted-{len(self.scripted.requests)}",
            "object": kind,
            "created": int(time.time()),
            "model": reply.model or request.model or "test-model",
            "system_fingerprint": None,
        }

    def _send_error(self, reply: Reply) -> None:
        headers = {}
        if reply.retry_after is not None:
            headers["Retry-After"] = f"{reply.retry_after:g}"
            headers["retry-after-ms"] = f"{reply.retry_after * 1000:g}"
        self._send_json(reply.status, reply.error_body(), headers)

    # ----- HTTP plumbing

    def _read_request(self) -> RecordedRequest:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        self.scripted._record(request)
        return request

    def _authorized(self, request: RecordedRequest) -> bool:
        key = self.scripted.api_key
        return key is None or request.headers.get("authorization") == f"Bearer {key}"

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_html(self) -> None:
        page = b"<!doctype html>\n<html><head><title>Sign in</title></head><body>UI</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def _sse(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        """Cut the connection abruptly: the client sees an incomplete response."""
        self.close_connection = True
        self.wfile.flush()
        _shutdown_quietly(self.connection)


def _tool_calls(reply: Reply) -> dict[str, Any]:
    if not reply.tool_calls:
        return {}
    return {
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for n, (name, arguments) in enumerate(reply.tool_calls, 1)
        ]
    }


def _prompt_tokens(request: RecordedRequest, ratio: float | None = None) -> int:
    return text_tokens("".join(str(m.get("content", "")) for m in request.messages), ratio)


def _overflow_reply(prompt: int, window: int) -> Reply:
    # The words llama.cpp's server uses for a prompt over its context size.
    return Reply(
        status=400,
        error={
            "message": f"the request exceeds the available context size ({prompt} tokens > "
            f"{window}), try increasing it",
            "type": "exceed_context_size_error",
        },
    )


def _cut_at_window(reply: Reply, room: int) -> Reply:
    """The reply as far as it fits in `room` tokens (chars / 4, as its usage counts them), cut
    with "length" there."""
    kept: list[str] = []
    chars = 0
    for piece in reply.pieces():
        if (chars + len(piece)) // 4 > room:
            return replace(reply, chunks=kept, text="".join(kept), finish_reason="length")
        kept.append(piece)
        chars += len(piece)
    return reply


def _usage(request: RecordedRequest, reply: Reply) -> dict[str, int]:
    if reply.usage is not None:
        prompt, completion = reply.usage
    else:
        prompt_chars = sum(len(str(m.get("content", ""))) for m in request.messages)
        prompt, completion = max(1, prompt_chars // 4), max(1, len(reply.text) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _shutdown_quietly(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def unused_base_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def scripted_server() -> Iterator[ScriptedServer]:
    """A started ScriptedServer; stopped after the test, which errors if a request came in with
    nothing scripted for it."""
    server = ScriptedServer().start()
    try:
        yield server
    finally:
        server.stop()
    server.check()
