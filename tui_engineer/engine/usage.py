"""What a session's model calls cost, as the human sees it: the usage so far (live, estimated,
while a reply streams), each exchange for the record, and a warning near a budget."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from tui_engineer.engine import events as ev
from tui_engineer.engine.options import EngineOptions
from tui_engineer.engine.prompts import Message

if TYPE_CHECKING:
    from tui_engineer.llm import Completion, UsageLedger

LIVE_USAGE_EVERY = 0.25  # seconds between live token-count updates while a reply streams


def estimate(chars: int) -> int:
    return (chars + 3) // 4  # the same chars / 4 as the model layer's estimate


def usage_event(
    ledger: UsageLedger, options: EngineOptions, in_flight: tuple[int, int], live: bool
) -> ev.UsageUpdated:
    """The session's usage so far, plus the (prompt, reply) tokens of a call still streaming
    (estimated, so the update says so)."""
    return ev.UsageUpdated(
        prompt_tokens=ledger.prompt_tokens + in_flight[0],
        completion_tokens=ledger.completion_tokens + in_flight[1],
        usd=ledger.usd,
        max_tokens=options.max_tokens,
        max_usd=options.max_usd,
        estimated=live or bool(getattr(ledger, "estimated", False)),
    )


def exchange_event(
    messages: Sequence[Message], completion: Completion, purpose: str, step: int | None
) -> ev.ModelExchange:
    """One call, whole, for the run record."""
    usage = completion.usage
    return ev.ModelExchange(
        purpose=purpose,
        step=step,
        messages=tuple(dict(m) for m in messages),
        reply=completion.text,
        finish_reason=completion.finish_reason,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        usd=usage.usd,
        estimated=bool(getattr(usage, "estimated", False)),
        retries=getattr(completion, "retries", 0),
    )


def budget_warnings(
    ledger: UsageLedger, options: EngineOptions, warned: set[str]
) -> list[ev.BudgetWarning]:
    """A warning once per budget (`warned` remembers) when 80% of it is spent, so the human
    can wrap up."""
    spent = {
        "tokens": (ledger.prompt_tokens + ledger.completion_tokens, options.max_tokens),
        "USD": (ledger.usd, options.max_usd),
    }
    warnings = []
    for name, (used, cap) in spent.items():
        if cap and used is not None and used >= 0.8 * cap and name not in warned:
            warned.add(name)
            warnings.append(
                ev.BudgetWarning(
                    message=f"{used:,.4g} of the {cap:,.4g} {name} budget used; "
                    "the session stops before a call that would exceed it."
                )
            )
    return warnings


class LiveReply:
    """The reply streaming now: its text (for the record if the call fails) and a live,
    estimated token count in the status bar, at most every LIVE_USAGE_EVERY seconds."""

    def __init__(self, show: Callable[[tuple[int, int]], None], prompt_tokens: int) -> None:
        self.show = show  # shows the usage with these (prompt, reply) tokens in flight
        self.prompt_tokens = prompt_tokens
        self.parts: list[str] = []
        self.chars = 0
        self.last = time.monotonic()

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def add(self, chunk: str) -> None:
        self.parts.append(chunk)
        self.chars += len(chunk)
        now = time.monotonic()
        if now - self.last >= LIVE_USAGE_EVERY:
            self.last = now
            self.show((self.prompt_tokens, estimate(self.chars)))

    def reset(self) -> None:
        self.parts.clear()
        self.chars = 0
