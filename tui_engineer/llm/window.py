"""The context window: its size (from the config, else asked of the server once), the reply cap
that fits after a prompt, and the refusal to continue a reply cut off at the window.

A call whose prompt cannot fit is not made (a server would reject it or drop the stream), the
reply cap is lowered to what fits, and a reply cut at the window is not continued: the
continuation would only overflow it. The error names the window.
"""

from __future__ import annotations

from typing import Any

import openai

from tui_engineer.llm.errors import ContextWindowExceeded
from tui_engineer.llm.usage import CallUsage

MIN_REPLY_TOKENS = 256  # a reply shorter than this is of no use: the call is not worth making
DEFAULT_CONTEXT_WINDOW = 16_384  # tokens, when neither the config nor the server says
_WINDOW_KEYS = ("n_ctx", "context_length", "max_model_len", "context_window")


async def window_from_server(sdk: openai.AsyncOpenAI, base_url: str) -> int | None:
    """The window a server reports: llama.cpp's /props, or a models list with n_ctx /
    context_length metadata (vLLM, LM Studio…). None when it says nothing."""
    root = base_url.removesuffix("/v1")
    quick = sdk.with_options(max_retries=0, timeout=5.0)
    for url in (f"{root}/props", f"{base_url}/models"):
        try:
            body = await quick.get(url, cast_to=object)
        except (openai.OpenAIError, ValueError):
            continue
        found = window_in(body)
        if found:
            return found
    return None


def window_in(body: Any) -> int | None:
    """A context size in a server's /props or /models answer (llama.cpp, vLLM, LM Studio…)."""
    if isinstance(body, dict):
        for key in _WINDOW_KEYS:
            if isinstance(body.get(key), int) and body[key] > 0:
                return int(body[key])
        values: list[Any] = list(body.values())
    elif isinstance(body, list):
        values = body
    else:
        return None
    for value in values:
        found = window_in(value)
        if found:
            return found
    return None


def fit_reply_cap(window: int | None, prompt: int, wanted: int | None) -> int | None:
    """The reply cap that fits the window after a prompt of `prompt` tokens; refuse a prompt
    that leaves no useful room instead of sending it (a server would reject or drop it)."""
    if window is None:
        return wanted
    room = window - prompt
    if room < min(MIN_REPLY_TOKENS, wanted or MIN_REPLY_TOKENS):
        raise ContextWindowExceeded(
            f"The prompt (about {prompt:,} tokens) does not fit the model's context window "
            f"of {window:,} tokens with room for a reply, so it was not sent. Ask for a "
            "smaller change, lower context_budget, or set context_window if the server "
            "allows more."
        )
    return room if wanted is None else min(wanted, room)


def refuse_cut_at_window(
    model: str, window: int | None, usage: CallUsage, cap: int | None, wanted: int | None
) -> None:
    """A reply (of `usage`) cut because the window is full cannot be continued: the
    continuation would only overflow it (a server then drops the stream)."""
    if window is None:
        return
    used = usage.prompt_tokens + usage.completion_tokens
    cut_by_window = (cap is not None and wanted is not None and cap < wanted) or (
        used >= window - MIN_REPLY_TOKENS
    )
    if cut_by_window:
        raise ContextWindowExceeded(
            f"The reply from {model} was cut off at the model's context window "
            f"({window:,} tokens: about {usage.prompt_tokens:,} of prompt and "
            f"{usage.completion_tokens:,} of reply), so it was not continued or used. "
            "Ask for a smaller change, lower context_budget, or use a larger context."
        )
