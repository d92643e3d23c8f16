"""Prompt sizes in tokens: the server's own tokenizer where it has one, else characters / 4.

Local servers (llama.cpp's `llama-server`: POST /tokenize; llama-cpp-python: POST
/extras/tokenize/count) tokenize with the very model that answers, which is what matters when
a prompt must fit a small context window: code runs ~3.5 characters per token there (gemma3:
3.48 on this project's sources), so chars / 4 under-counts by ~13% and a prompt "that fits"
overflows. A hosted API has no such endpoint (and no window that small); tiktoken would need
its encoding files downloaded at run time, which an offline machine cannot do, so the
estimate stays chars / 4 there (docs/configuration.md).

Only a server that has the endpoint is asked: which one it is comes from its model list's
`owned_by` (llama-server: "llamacpp", llama-cpp-python: "me"), as window discovery reads it
(llm/discovery.py), else from one GET of that list. What each server has is remembered for
the process, by base URL: a hosted API is never sent a probe it answers 404, and a server is
looked at once however many sessions talk to it."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import openai

from tui_engineer.llm.usage import estimate_tokens

MESSAGE_FRAMING = 4  # tokens a chat format adds around each message (role markers)
PROBE_TIMEOUT = 3.0
CACHE_SIZE = 512  # messages remembered: a conversation is re-counted only for its new turns
# (path under the server root, the text's field, how the answer gives the count)
Route = tuple[str, str, str]
# The servers that have one, by their model list's owned_by.
_ROUTE_BY_OWNER: dict[str, Route] = {
    "me": ("/extras/tokenize/count", "input", "count"),  # llama-cpp-python
    "llamacpp": ("/tokenize", "content", "tokens"),  # llama.cpp's llama-server
}
# What each server (base URL) has, once known: its route, or None for none (per process).
_KNOWN: dict[str, Route | None] = {}
_COUNTED: set[str] = set()  # servers that counted a message (a later failure is passing)


def server_listed(base_url: str, owner: str) -> None:
    """The server at `base_url` listed its models as `owner`'s: whether it can count tokens is
    known from now on. A fresh list wins over what was learned before: the server at an
    address may have been restarted as another (llama.cpp's where vLLM was)."""
    base = base_url.rstrip("/")
    _KNOWN[base] = _ROUTE_BY_OWNER.get(owner)
    _COUNTED.discard(base)


def _count_in(body: Any, answer: str) -> int | None:
    value = body.get(answer) if isinstance(body, dict) else None
    if answer == "tokens" and isinstance(value, list):
        return len(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class PromptCounter:
    """Counts a conversation's prompt tokens. `measure` (async) asks the server for messages
    not counted yet; `count` (sync) adds up what is known, estimating the rest."""

    def __init__(self, sdk: openai.AsyncOpenAI, base_url: str, model: str) -> None:
        self._sdk = sdk.with_options(max_retries=0, timeout=PROBE_TIMEOUT)
        self._base = base_url.rstrip("/")
        self._root = self._base.removesuffix("/v1")
        self._model = model
        self._available = False  # True once the server counted a message
        self._known: OrderedDict[str, int] = OrderedDict()

    @property
    def uses_server(self) -> bool:
        return self._available

    async def measure(self, conversation: Sequence[dict[str, str]]) -> None:
        for message in conversation:
            text = str(message.get("content", ""))
            route = await self._route()
            if route is None:
                return
            if text in self._known:
                self._known.move_to_end(text)
                continue
            tokens = await self._ask(route, text)
            if tokens is not None:
                self._remember(text, tokens)

    def count(self, conversation: Sequence[dict[str, str]]) -> int:
        total = 0
        for message in conversation:
            text = str(message.get("content", ""))
            known = self._known.get(text)
            total += (estimate_tokens(text) if known is None else known) + MESSAGE_FRAMING
        return total

    def _remember(self, text: str, tokens: int) -> None:
        self._known[text] = tokens
        if len(self._known) > CACHE_SIZE:
            self._known.popitem(last=False)

    async def _route(self) -> Route | None:
        """The server's counting endpoint, None if it has none: from its model list (read by
        discovery already, or asked here once)."""
        if self._base not in _KNOWN:
            try:
                listing = await self._sdk.get(f"{self._base}/models", cast_to=object)
            except (openai.OpenAIError, ValueError):
                listing = None
            server_listed(self._base, list_owner(listing))
        return _KNOWN[self._base]

    async def _ask(self, route: Route, text: str) -> int | None:
        path, field, answer = route
        body = {field: text, "model": self._model}
        try:
            reply = await self._sdk.post(f"{self._root}{path}", body=body, cast_to=object)
        except (openai.OpenAIError, ValueError):
            reply = None
        tokens = _count_in(reply, answer)
        if tokens is not None:
            _COUNTED.add(self._base)
            self._available = True
        elif self._base not in _COUNTED:
            _KNOWN[self._base] = None  # it never counted: not asked again
        return tokens


def list_owner(listing: Any) -> str:
    """The one `owned_by` of a model list's entries ("" when none or several)."""
    data = listing.get("data") if isinstance(listing, dict) else None
    entries = [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
    owners = {str(e.get("owned_by", "")) for e in entries}
    return owners.pop() if len(owners) == 1 else ""
