"""Turning `openai` SDK exceptions (after the SDK's own retries) into `LLMError`s whose message
says what went wrong and what to do, naming the server URL and never containing the API key."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import openai

from tui_engineer.llm.errors import (
    AuthRejected,
    LLMError,
    ModelReplyError,
    NotTheApi,
    ServerUnreachable,
    UnknownModel,
)

SDK_LONGEST_WAIT = 120  # seconds: the openai SDK gives up at once on a longer Retry-After
LARGE_PROMPT = 512  # tokens: with an unknown window, a drop after this much may be overflow
_KEY_LIKE = re.compile(r"\b(?:sk|key)-[\w*.\-]{4,}")  # e.g. "sk-proj-abc***xyz" echoed by servers


@dataclass(frozen=True)
class ErrorMapper:
    """What the messages mention: the client's settings, and the key to redact."""

    model: str
    base_url: str
    api_key_env: str
    api_key: str
    max_retries: int
    timeout: float

    def sdk_error(self, err: openai.OpenAIError) -> LLMError:
        """The user-facing error for an SDK exception."""
        url, tries = self.base_url, self._attempts()
        if isinstance(err, openai.APITimeoutError):
            return ServerUnreachable(
                f"The model server at {url} timed out ({self.timeout:g} s per request, "
                f"{tries}). It may be overloaded or too slow for this model; try again later, "
                "or check OPENAI_BASE_URL / --base-url."
            )
        if isinstance(err, openai.APIConnectionError):
            scheme = (
                ""
                if url.startswith(("http://", "https://"))
                else " It must start with http:// or https://."
            )
            return ServerUnreachable(
                f"Could not reach the model server at {url} ({tries}).{scheme} Is it running "
                "and is the address right? Set OPENAI_BASE_URL or pass --base-url."
            )
        if isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
            code = err.code or f"HTTP {err.status_code}"
            return AuthRejected(
                f"The server at {url} rejected the API key from {self.api_key_env} ({code}). "
                f"Check the key in {self.api_key_env}, and that it is meant for this server."
            )
        if isinstance(err, openai.APIStatusError):
            return self._status_error(err)
        return LLMError(f"The model call to {url} failed: {self.redact(str(err))}")

    def _status_error(self, err: openai.APIStatusError) -> LLMError:
        url, status, detail = self.base_url, err.status_code, self.redact(server_message(err))
        if status == 404 and (err.code == "model_not_found" or "model" in detail.lower()):
            return UnknownModel(self.unknown_model_text(f"The server said: {detail}"))
        if status == 404:
            return LLMError(
                f"The server at {url} answered 404 Not Found for the chat endpoint. Is the base "
                "URL right? OpenAI-compatible servers usually end in /v1 (OPENAI_BASE_URL / "
                "--base-url)."
            )
        wait = _asked_wait(err)
        if status == 429 and wait is not None and wait > SDK_LONGEST_WAIT:
            return LLMError(
                f"The server at {url} refused with 429 (rate limit or quota) and asked to wait "
                f"{wait:g} s ({_minutes(wait)}) before the next request, longer than "
                f"tui-engineer waits on its own ({SDK_LONGEST_WAIT} s): {detail} Try again "
                "after that, or check your plan."
            )
        if status == 429:
            return LLMError(
                f"The server at {url} kept refusing with 429 (rate limit or quota; "
                f"{self._attempts()}): {detail} Wait a little, or check your plan."
            )
        if status >= 500:
            return LLMError(
                f"The server at {url} failed with HTTP {status} ({self._attempts()}): {detail} "
                "Try again later."
            )
        if err.code == "context_length_exceeded":
            return ModelReplyError(
                f"The conversation is too long for {self.model}: {detail} Ask for a smaller "
                "change or use a model with a larger context."
            )
        return LLMError(f"The server at {url} refused the request (HTTP {status}): {detail}")

    def _attempts(self) -> str:
        return "1 attempt" if self.max_retries == 0 else f"up to {self.max_retries + 1} attempts"

    def unknown_model_text(self, detail: str) -> str:
        return (
            f"The server at {self.base_url} does not know the model '{self.model}'. {detail} "
            "Pick another with --model (see `tui-engineer config` for the current settings)."
        )

    def dropped_stream(
        self,
        cause: Exception | None,
        tries: int,
        prompt_tokens: int = 0,
        context_window: int | None = None,
    ) -> LLMError:
        """The error once a stream was cut mid-reply `tries` times in a row. With a large
        prompt the likely cause is the context window (llama.cpp drops such streams)."""
        if isinstance(cause, openai.APITimeoutError):
            return self.idle_stream(tries)
        size = f" The prompt was about {prompt_tokens:,} tokens" if prompt_tokens else ""
        unknown_but_large = context_window is None and prompt_tokens >= LARGE_PROMPT
        if unknown_but_large or (context_window and prompt_tokens > context_window // 2):
            window = (
                f"its context window ({context_window:,} tokens)"
                if context_window
                else "its context window (unknown: set context_window)"
            )
            likely = (
                f"{size}: the likely cause is that the prompt and reply overflow {window}. "
                "Ask for a smaller change or lower context_budget."
            )
        else:
            likely = f"{size}. Check the server (or a proxy in between) and try again."
        return ModelReplyError(
            f"The connection to {self.base_url} was cut in the middle of the reply {tries} "
            f"times in a row.{likely}"
        )

    def idle_stream(self, tries: int) -> ServerUnreachable:
        """A reply with no text for the idle time (no bytes, or keep-alives only), `tries`
        times in a row."""
        return ServerUnreachable(
            f"The model server at {self.base_url} sent no text for {self.timeout:g} s in the "
            f"middle of a reply (nothing, or only keep-alives or empty chunks), {tries} times. "
            "Try again later, or raise stream_idle_timeout for a slow server."
        )

    def is_web_page(self, headers: Mapping[str, str]) -> bool:
        return "text/html" in headers.get("content-type", "").lower()

    def refuse_web_page(self, headers: Mapping[str, str]) -> None:
        """Raise NotTheApi when a reply is a web page (HTML), whatever its status: the base
        URL points at a web UI, a proxy's login page, or the server's root instead of /v1.
        Checked before the body is read, so before any retry. (Once the server has answered
        properly, llm/streaming.py takes such a page for a proxy's error page and retries.)"""
        if self.is_web_page(headers):
            raise NotTheApi(
                f"The server at {self.base_url} answered with an HTML page, not the OpenAI "
                "API: is the base URL right, ending in /v1? (OPENAI_BASE_URL / --base-url)"
            )

    def redact(self, text: str) -> str:
        text = text.replace(self.api_key, "***")
        return _KEY_LIKE.sub("***", text)


def server_message(err: openai.APIStatusError) -> str:
    """The server's own explanation of an HTTP error, as plain text."""
    body = err.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"].strip()
    return err.message


def _asked_wait(err: openai.APIStatusError) -> float | None:
    """The seconds a refusal asked to wait (Retry-After in seconds, or retry-after-ms)."""
    headers = err.response.headers
    try:
        if "retry-after-ms" in headers:
            return float(headers["retry-after-ms"]) / 1000
        return float(headers["retry-after"]) if "retry-after" in headers else None
    except ValueError:  # an HTTP date: rare from model servers, and the SDK's own to read
        return None


def _minutes(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"
