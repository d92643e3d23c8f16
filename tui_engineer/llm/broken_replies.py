"""A reply that broke (cut, malformed, an error event, empty, a gateway's error page) and what
is done about it: asked again from scratch a bounded number of times, backing off after an
error page as the SDK does before a 502/503, and, once the retries are spent, an error that says
what broke and what to do (llm/streaming.py makes the calls)."""

from __future__ import annotations

from tui_engineer.llm.error_mapping import ErrorMapper
from tui_engineer.llm.errors import LLMError, ModelReplyError

DROPPED_STREAM_RETRIES = 2  # a broken reply (cut, malformed, error event, empty): retries
ERROR_PAGE = "an HTML error page from a proxy or gateway"  # the reason a retry gives
ERROR_PAGE_BACKOFF = 0.5  # seconds before the first retry after an error page, doubled after
# A local model that answers nothing at all is most often given the wrong chat template: a model
# file without one (a base model) makes llama-cpp-python fall back to llama-2's format.
EMPTY_REPLY_HINT = (
    "A local model that answers nothing is often missing its chat template (base models have "
    "none; the server then falls back to another model's format): start the server with the "
    "model's chat format (llama-cpp-python: --chat_format gemma, chatml…; llama-server: --jinja "
    "or --chat-template), or pick an instruction-tuned model."
)


class StreamDropped(Exception):
    """A reply that broke and may be asked again: `reason` says how, for the user."""

    def __init__(self, partial: str, cause: Exception | None, reason: str = "dropped") -> None:
        super().__init__(f"stream {reason}")
        self.partial = partial
        self.cause = cause
        self.reason = reason


class BrokenChunk(Exception):
    """A chunk the API never sends (a number for `content`, `choices: null`): its message says
    what it held, for the user."""


def backoff(drop: StreamDropped, attempt: int) -> float:
    """Seconds to wait before asking again after `attempt` (0 first) broke as `drop` did."""
    return ERROR_PAGE_BACKOFF * 2**attempt if drop.reason == ERROR_PAGE else 0.0


def retries_spent(
    drop: StreamDropped,
    *,
    model: str,
    base_url: str,
    errors: ErrorMapper,
    prompt_tokens: int,
    known_window: int | None,
) -> LLMError:
    """The error once the last retry broke too (`known_window`: the context window when it was
    configured or learned, which a dropped stream's error names)."""
    tries = DROPPED_STREAM_RETRIES + 1
    if drop.reason == ERROR_PAGE:
        return LLMError(
            f"The server at {base_url} answered with an HTML page instead of a reply "
            f"{tries} times in a row, after answering properly earlier in this session: a "
            "proxy or gateway in between is failing. Try again later."
        )
    if drop.reason == "empty":
        return ModelReplyError(
            f"The model {model} at {base_url} returned an empty reply {tries} "
            f"times in a row. {EMPTY_REPLY_HINT}"
        )
    if drop.reason in ("malformed", "error event"):
        detail = errors.redact(_named(drop.cause))[:300]
        return ModelReplyError(
            f"The server at {base_url} sent a broken reply ({drop.reason}: {detail}) "
            f"{tries} times in a row. Check the server and try again."
        )
    if drop.reason == "idle":
        return errors.idle_stream(tries)
    return errors.dropped_stream(drop.cause, tries, prompt_tokens, known_window)


def _named(cause: Exception | None) -> str:
    """What was wrong with a malformed reply, in words (not Python's)."""
    if isinstance(cause, UnicodeDecodeError):
        return f"a byte that is not UTF-8 (0x{cause.object[cause.start]:02x})"
    return str(cause or "")
