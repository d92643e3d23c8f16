"""The context window: the reply cap that fits after a prompt, and the refusal to continue a reply
cut off at the window, or into one that cannot hold the continuation (its size: from the
config, else the server, llm/discovery.py).

A call whose prompt cannot fit is not made (a server would reject it or drop the stream), the
reply cap is lowered to what fits, and a reply cut at the window is not continued: the
continuation would only overflow it. The error names the window.
"""

from __future__ import annotations

from tui_engineer.llm.errors import ContextWindowExceeded
from tui_engineer.llm.usage import CallUsage

MIN_REPLY_TOKENS = 256  # a reply shorter than this is of no use: the call is not worth making
DEFAULT_CONTEXT_WINDOW = 16_384  # tokens, when neither the config nor the server says


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


def server_cut_short(usage: CallUsage, cap: int | None) -> bool:
    """A "length" finish short of the cap sent (by the server's own count): the server's own
    limit cut it. llama-cpp-python lowers a reply's limit to what its window leaves, silently,
    so a server that tells nothing of its window shows it this way."""
    return cap is not None and not usage.estimated and usage.completion_tokens < cap


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


def refuse_continuation(model: str, window: int | None, prompt: int, cap: int | None) -> None:
    """A reply cut at its cap is continued only where the window can hold a continuation as
    long (a `prompt`-token conversation, the cut reply in it): else the continuation would be
    cut by the window in turn, or overflow it."""
    if window is None or cap is None or window - prompt >= cap:
        return
    raise ContextWindowExceeded(
        f"The reply from {model} was cut off by the token limit ({cap:,} tokens), and the "
        f"model's context window ({window:,} tokens, about {prompt:,} used by then) cannot "
        "hold a continuation as long, so it was not continued or used. Ask for a smaller "
        "change, or use a larger context."
    )
