"""The demo model behind a real OpenAI-compatible HTTP endpoint on 127.0.0.1, in a thread.

Why a server and not an in-process model object: the demo then goes through exactly the code a
real session uses (the openai SDK, streaming, usage, the start-up server check), so what the
demo shows is what users get. It answers GET /v1/models and POST /v1/chat/completions,
streamed (SSE, with a usage chunk) or whole."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tui_engineer.demo.model import Message, reply

MODEL = "demo-model"
CHUNK_CHARS = 24  # one streamed piece
CHUNK_SECONDS = 0.01  # pause between pieces: the reply visibly streams in, like a real model

Answer = Callable[[Sequence[Message]], str]


class DemoServer:
    """`with DemoServer() as server:` serves on `server.base_url` until the block ends."""

    def __init__(self, answer: Answer = reply, *, port: int = 0, pace: float = CHUNK_SECONDS):
        self.answer = answer
        self.pace = pace
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.demo = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> DemoServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def demo(self) -> DemoServer:
        return self.server.demo  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # the TUI owns the terminal

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": MODEL, "object": "model", "created": 0, "owned_by": "tui-engineer"}
            self._json(200, {"object": "list", "data": [model]})
        else:
            self._json(404, _error("Not found."))

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
            messages = list(body["messages"])
        except (ValueError, KeyError, TypeError):
            self._json(400, _error("The demo server needs a JSON body with messages."))
            return
        text = self.demo.answer(messages)
        usage = _usage(messages, text)
        if body.get("stream"):
            self._stream(text, usage, bool((body.get("stream_options") or {}).get("include_usage")))
            return
        choice = {"index": 0, "message": {"role": "assistant", "content": text}}
        self._json(200, _envelope("chat.completion", [{**choice, "finish_reason": "stop"}], usage))

    def _stream(self, text: str, usage: dict[str, int], with_usage: bool) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        pieces = [text[i : i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]
        for piece in pieces:
            delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
            self._event(_envelope("chat.completion.chunk", [delta]))
            time.sleep(self.demo.pace)
        end = {"index": 0, "delta": {}, "finish_reason": "stop"}
        self._event(_envelope("chat.completion.chunk", [end]))
        if with_usage:
            self._event(_envelope("chat.completion.chunk", [], usage))
        self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _event(self, payload: dict[str, Any]) -> None:
        self._chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _envelope(
    kind: str, choices: list[dict[str, Any]], usage: dict[str, int] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "demo",
        "object": kind,
        "created": int(time.time()),
        "model": MODEL,
        "choices": choices,
    }
    if usage is not None:
        out["usage"] = usage
    return out


def _usage(messages: Sequence[Message], text: str) -> dict[str, int]:
    """Rough token counts (4 characters a token), so the status bar has numbers to show."""
    prompt = sum(len(str(m.get("content", ""))) for m in messages) // 4
    completion = len(text) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "code": None}}
