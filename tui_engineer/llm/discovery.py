"""The model's context window, as each common server tells it: asked once a session when the
config sets no `context_window`, and shown to the user with where it came from.

Servers say it in different places, and some not at all:
- llama.cpp's llama-server: `GET /props` → `default_generation_settings.n_ctx` (per slot). Its
  `/v1/models` lists `meta.n_ctx_train`, the length the model was trained for: not the window.
- vLLM: `max_model_len` in each `/v1/models` entry (so do some hosted lists: `context_length`,
  `context_window`).
- LM Studio: `GET /api/v0/models` → the model's `loaded_context_length` once it is loaded;
  before, only `max_context_length` (what the model allows, not what LM Studio loads it with).
- Ollama: `GET /api/ps` → a loaded model's `context_length`; `POST /api/show` → `num_ctx` in
  `parameters` when a Modelfile sets it; else Ollama's default. Ollama cuts a longer prompt
  silently (no error: the model answers what is left), so the report carries a warning.
- llama-cpp-python's server says nothing, but a prompt longer than its window is refused before
  any decoding, naming the window ("This model's maximum context length is N tokens"): one text
  completion with a prompt longer than any window it could have answers that at the cost of
  tokenizing it. Its `/v1/models` entries say `owned_by: "me"`.

Which server it is comes from the `owned_by` of the model list; an unknown one is asked at
each server's own endpoint at once, and the first in the cheapest order that answers wins.
Every request is quick (no retries, a short timeout); a server that answers none leaves the
window unknown (the client then assumes a default and says so).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import openai

from tui_engineer.llm.error_mapping import server_message
from tui_engineer.llm.models import names_model_file
from tui_engineer.llm.tokens import server_listed

ASK_TIMEOUT = 5.0  # seconds per discovery request
# llama-cpp-python: a prompt of this many tokens (" x" is one token) is over any window it
# serves on a real machine; refusing it took 1.0 s here (tokenizing only; 2^20: 3.6 s).
OVERSIZED_TOKENS = 1 << 18
OVERSIZED_TIMEOUT = 30.0
OLLAMA_DEFAULT = 4096  # Ollama's num_ctx when nothing sets it (below 24 GB of VRAM)
LM_STUDIO_UNLOADED = 4096  # assumed until LM Studio has loaded the model (its loads vary)
_WINDOW_KEYS = ("n_ctx", "context_length", "max_model_len", "context_window")
_NAMED_WINDOW = re.compile(r"maximum context length is (\d+)")
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)

OLLAMA_TRUNCATES = (
    "Ollama cuts a prompt longer than its context (num_ctx) without an error, and the model "
    "then answers a request it only partly saw: prompts are kept within {tokens:,} tokens here. "
    "For more, start Ollama with OLLAMA_CONTEXT_LENGTH=32768 (or set num_ctx in a Modelfile) "
    "and set context_window to the same."
)


@dataclass(frozen=True)
class WindowReport:
    """A context window and where it came from, in words for the user."""

    tokens: int
    source: str  # e.g. "llama.cpp's server: n_ctx in /props"
    warning: str = ""  # something the user should act on (Ollama's silent truncation)
    origin: str = "server"  # "server" (it told), "config" or "assumed" (nothing said)

    def describe(self) -> str:
        return f"{self.tokens:,} tokens ({self.source})"


Entry = dict[str, Any]
Reader = Callable[[list[Entry]], Awaitable[WindowReport | None]]


class WindowDiscovery:
    """Asks one server for the window of one model."""

    def __init__(self, sdk: openai.AsyncOpenAI, base_url: str, model: str) -> None:
        self._sdk = sdk.with_options(max_retries=0, timeout=ASK_TIMEOUT)
        self._base = base_url.rstrip("/")
        self._root = self._base.removesuffix("/v1")
        self._model = model

    async def discover(self, listing: Any = None) -> WindowReport | None:
        """`listing`: the server's /models if it was just read (one round trip less)."""
        if listing is None:
            listing = await self._get(f"{self._base}/models")
        entries = _entries(listing)
        if listing is not None:
            server_listed(self._base, _owner(entries))  # whether it counts tokens (tokens.py)
        known: dict[str, Reader] = {
            "llamacpp": self._llama_server,
            "vllm": self._listed,
            "me": self._llama_cpp_python,
            "organization_owner": self._lm_studio,
        }
        reader = known.get(_owner(entries))
        if reader is not None:
            return await reader(entries)
        # Unknown: what the list says, else each server's own endpoint, all asked at once (a
        # remote server's round trip each, one after another, before the first prompt).
        listed = await self._listed(entries)
        if listed is not None:
            return listed
        probes = (self._llama_server, self._ollama, self._lm_studio)
        answers = await asyncio.gather(*(probe(entries) for probe in probes))
        return next((report for report in answers if report is not None), None)

    # ----- each server

    async def _listed(self, entries: list[Entry]) -> WindowReport | None:
        entry = self._entry(entries)
        for key in _WINDOW_KEYS:
            tokens = _positive(entry.get(key)) if entry else None
            if tokens:
                return WindowReport(tokens, f"{key} in the server's model list")
        return None

    async def _llama_server(self, _: list[Entry]) -> WindowReport | None:
        props = await self._get(f"{self._root}/props")
        if not isinstance(props, dict):
            return None
        settings = props.get("default_generation_settings")
        tokens = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
        tokens = tokens or _positive(props.get("n_ctx"))
        return WindowReport(tokens, "llama.cpp's server: n_ctx in /props") if tokens else None

    async def _lm_studio(self, _: list[Entry]) -> WindowReport | None:
        listing = await self._get(f"{self._root}/api/v0/models")
        entry = self._entry(_entries(listing))
        if entry is None:
            return None
        loaded = _positive(entry.get("loaded_context_length"))
        if loaded:
            return WindowReport(loaded, "LM Studio: the loaded model's context length")
        most = _positive(entry.get("max_context_length"))
        if not most:
            return None
        tokens = min(most, LM_STUDIO_UNLOADED)
        return WindowReport(
            tokens,
            "LM Studio has not loaded the model yet: assumed",
            f"LM Studio will load the model with a context length of its own settings (the "
            f"model allows {most:,} tokens); {tokens:,} are assumed. Load it first, or set "
            "context_window to the length it is loaded with.",
        )

    async def _ollama(self, _: list[Entry]) -> WindowReport | None:
        version = await self._get(f"{self._root}/api/version")
        if not (isinstance(version, dict) and isinstance(version.get("version"), str)):
            return None
        running = _entries(await self._get(f"{self._root}/api/ps"), key="models")
        entry = self._entry(running, names=("name", "model"))
        tokens = _positive(entry.get("context_length")) if entry else None
        source = "Ollama: the loaded model's context length (/api/ps)"
        if not tokens:
            show = await self._post(f"{self._root}/api/show", {"model": self._model})
            params = show.get("parameters") if isinstance(show, dict) else None
            found = _NUM_CTX.search(params) if isinstance(params, str) else None
            tokens = int(found.group(1)) if found else None
            source = "Ollama: num_ctx in the model's Modelfile (/api/show)"
        if not tokens:
            tokens, source = OLLAMA_DEFAULT, "Ollama's default num_ctx: nothing sets it"
        return WindowReport(tokens, source, OLLAMA_TRUNCATES.format(tokens=tokens))

    async def _llama_cpp_python(self, _: list[Entry]) -> WindowReport | None:
        """One text completion with a prompt over any window: refused before any decoding,
        with the window in the error. (A server with a larger window would decode it: none
        has one on a real machine.)"""
        filler = "x" + " x" * (OVERSIZED_TOKENS - 1)
        body = {"model": self._model, "prompt": filler, "max_tokens": 1}
        quick = self._sdk.with_options(timeout=OVERSIZED_TIMEOUT)
        try:
            await quick.post(f"{self._base}/completions", body=body, cast_to=object)
        except openai.APIStatusError as err:
            named = _NAMED_WINDOW.search(server_message(err))
            if named:
                source = "llama-cpp-python's server: its answer to an oversized prompt"
                return WindowReport(int(named.group(1)), source)
        except (openai.OpenAIError, ValueError):
            pass
        return None

    # ----- plumbing

    def _entry(self, entries: list[Entry], names: tuple[str, ...] = ("id",)) -> Entry | None:
        """Our model's entry: by its name (Ollama's "name" means "name:latest"; a model file
        answers to its file name), else the only entry."""
        wanted = {self._model, f"{self._model}:latest"}
        for entry in entries:
            listed = [str(entry[n]) for n in names if entry.get(n)]
            if wanted & set(listed) or (listed and names_model_file(self._model, listed[0])):
                return entry
        return entries[0] if len(entries) == 1 else None

    async def _get(self, url: str) -> Any:
        try:
            return await self._sdk.get(url, cast_to=object)
        except (openai.OpenAIError, ValueError):
            return None

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        try:
            return await self._sdk.post(url, body=body, cast_to=object)
        except (openai.OpenAIError, ValueError):
            return None


def _entries(listing: Any, key: str = "data") -> list[Entry]:
    data = listing.get(key) if isinstance(listing, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def _owner(entries: list[Entry]) -> str:
    owners = {str(e.get("owned_by", "")) for e in entries}
    return owners.pop() if len(owners) == 1 else ""


def _positive(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None
