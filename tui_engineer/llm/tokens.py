"""Prompt sizes in tokens: the server's own tokenizer where it has one, else characters / 4.

Local servers (llama.cpp's `llama-server`: POST /tokenize; llama-cpp-python: POST
/extras/tokenize/count) tokenize with the very model that answers, which is what matters when
a prompt must fit a small context window: code runs ~3.5 characters per token there (gemma3:
3.48 on this project's sources), so chars / 4 under-counts by ~13% and a prompt "that fits"
overflows. A hosted API has no such endpoint (and no window that small); tiktoken would need
its encoding files downloaded at run time, which an offline machine cannot do, so the
estimate stays chars / 4 there (docs/configuration.md)."""

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
_ROUTES = (("/extras/tokenize/count", "input", "count"), ("/tokenize", "content", "tokens"))


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
        self._root = base_url.rstrip("/").removesuffix("/v1")
        self._model = model
        self._route: tuple[str, str, str] | None = None
        self._available: bool | None = None  # None: not asked yet
        self._known: OrderedDict[str, int] = OrderedDict()

    @property
    def uses_server(self) -> bool:
        return bool(self._available)

    async def measure(self, conversation: Sequence[dict[str, str]]) -> None:
        for message in conversation:
            text = str(message.get("content", ""))
            if self._available is False:
                return
            if text in self._known:
                self._known.move_to_end(text)
                continue
            tokens = await self._ask(text)
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

    async def _ask(self, text: str) -> int | None:
        routes = [self._route] if self._route else list(_ROUTES)
        for route in routes:
            path, field, answer = route
            body = {field: text, "model": self._model}
            try:
                reply = await self._sdk.post(f"{self._root}{path}", body=body, cast_to=object)
            except (openai.OpenAIError, ValueError):
                continue
            tokens = _count_in(reply, answer)
            if tokens is not None:
                self._route, self._available = route, True
                return tokens
        if self._available is None:
            self._available = False  # asked once: the server has no tokenizer endpoint
        return None
