"""Token and money accounting: per-call usage, the session ledger, the price table and budgets.

An unknown price is `None` everywhere ("unknown"), never 0: a free-looking session that is in
fact billed would be worse than an honest "cost unknown".
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from tui_engineer.llm.errors import BudgetExceeded

# USD per 1M tokens (input, output), list prices of well-known models (2025). Anything not here
# (local models, other vendors) is "unknown" rather than guessed.
PRICES: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")  # snapshot names: gpt-4o-2024-08-06


def price_for(model: str) -> tuple[float, float] | None:
    """USD per 1M (input, output) tokens, or None when the model's price is unknown.

    Accepts dated snapshots ("gpt-4o-mini-2024-07-18") and an "openai/" prefix (routers).
    """
    name = model.strip().lower().removeprefix("openai/")
    return PRICES.get(name) or PRICES.get(_DATED.sub("", name))


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    price = price_for(model)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def estimate_tokens(text: str) -> int:
    """Rough token count (4 characters per token), used when the server reports no usage."""
    return (len(text) + 3) // 4


@dataclass
class CallUsage:
    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # None = unknown price
    estimated: bool = False  # True when the server reported no usage and we counted chars / 4

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def combine(cls, calls: list[CallUsage]) -> CallUsage:
        """The sum of several calls (e.g. a reply stitched from continuations)."""
        costs = [c.usd for c in calls]
        return cls(
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            usd=None if None in costs else sum(c for c in costs if c is not None),
            estimated=any(c.estimated for c in calls),
        )


@dataclass
class UsageLedger:
    """Every model call of a session, in order, and what the calls in flight hold.

    Calls made side by side (steps prepared at once) each reserve their prompt and reply cap
    (and that much money) before they are sent, and give it back when their usage is in: the
    budgets count the reserve as spent, so calls in flight together never overspend."""

    calls: list[CallUsage] = field(default_factory=list)
    reserved_tokens: int = 0
    reserved_usd: float = 0.0

    def add(self, call: CallUsage) -> None:
        self.calls.append(call)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def completion_tokens(self) -> int:
        return sum(c.completion_tokens for c in self.calls)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def usd(self) -> float | None:
        """Money spent so far; None if any call's price is unknown (0.0 before any call)."""
        return CallUsage.combine(self.calls).usd

    @property
    def estimated(self) -> bool:
        return any(c.estimated for c in self.calls)

    def summary(self) -> str:
        """One line for humans, e.g. "12,345 tokens (~estimated), $0.0123" / "cost unknown"."""
        tokens = f"{self.total_tokens:,} tokens" + (" (partly estimated)" if self.estimated else "")
        return f"{tokens}, " + format_cost(self.usd)


def format_cost(usd: float | None) -> str:
    """The one way money is shown (status bar, headless summary, `runs`): "$0.0015",
    "$1.23", or "cost unknown" for a model without a known price."""
    return "cost unknown" if usd is None else format_usd(usd)


def format_usd(usd: float) -> str:
    if 0 < usd < 0.0001:
        return "<$0.0001"  # "$0.0000" would read as free
    return f"${usd:.2f}" if usd >= 1 else f"${usd:.4f}"


@dataclass
class Budget:
    """Session caps. `None` means no cap. Checked before every model call."""

    max_tokens: int | None = None
    max_usd: float | None = None
    max_wall_seconds: float | None = None
    started_at: float = field(default_factory=time.monotonic)

    def check(self, ledger: UsageLedger, *, next_prompt_tokens: int = 0) -> None:
        """Raise BudgetExceeded if the next call must not be made.

        `next_prompt_tokens` is the estimated size of the next call (prompt plus expected
        output): a call that would cross `max_tokens` is refused. Money and time are checked as
        spent-so-far >= cap, since a call's price is only known afterwards.
        """
        self._check_wall_time()
        self._check_usd(ledger)
        self._check_tokens(ledger, next_prompt_tokens)

    def seconds_left(self) -> float | None:
        """Time until the wall-time budget runs out (None: no such budget)."""
        if self.max_wall_seconds is None:
            return None
        return max(0.0, self.max_wall_seconds - (time.monotonic() - self.started_at))

    def reply_room(self, ledger: UsageLedger, prompt_tokens: int) -> int | None:
        """Tokens the token cap leaves for the next reply after its prompt, and after what the
        calls in flight hold (None: no cap)."""
        if self.max_tokens is None:
            return None
        return self.max_tokens - ledger.total_tokens - ledger.reserved_tokens - prompt_tokens

    def _check_tokens(self, ledger: UsageLedger, next_tokens: int) -> None:
        if self.max_tokens is None:
            return
        used, held = ledger.total_tokens, ledger.reserved_tokens
        if used + held + next_tokens > self.max_tokens:
            raise BudgetExceeded(
                f"Token budget reached: {used:,} of {self.max_tokens:,} tokens used"
                f"{_held(f'{held:,} tokens', held)}, and the next model call needs about "
                f"{next_tokens:,} more. The call was not made. Raise the max_tokens setting "
                "(--max-tokens) to continue.",
                budget="tokens",
                used=used,
                cap=self.max_tokens,
            )

    def tokens_exceeded(self, used: int) -> BudgetExceeded:
        """The error when the token budget ran out in the middle of a streamed reply."""
        cap = self.max_tokens or 0
        return BudgetExceeded(
            f"Token budget reached during a reply: about {used:,} of {cap:,} tokens used. The "
            "reply was cut off there and not used. Raise the max_tokens setting (--max-tokens) "
            "to continue.",
            budget="tokens",
            used=used,
            cap=cap,
        )

    def time_exceeded(self) -> BudgetExceeded:
        """The error when the wall-time budget ran out in the middle of a model call."""
        cap = self.max_wall_seconds or 0.0
        elapsed = time.monotonic() - self.started_at
        return BudgetExceeded(
            f"Time budget reached during a model call: the session has run {_duration(elapsed)} "
            f"of the {_duration(cap)} allowed. The reply was cut off there and not used. Raise "
            "the max_wall_seconds setting (--max-minutes) to continue.",
            budget="wall_time",
            used=elapsed,
            cap=cap,
        )

    def _check_usd(self, ledger: UsageLedger) -> None:
        if self.max_usd is None:
            return
        spent = ledger.usd
        if spent is None:
            raise BudgetExceeded(
                f"Money budget cannot be enforced: max_usd is ${self.max_usd:.2f} but the price "
                "of the model is unknown, so spending cannot be counted. Unset max_usd "
                "(--max-usd) and use max_tokens (--max-tokens) instead.",
                budget="usd",
                used=float("nan"),
                cap=self.max_usd,
            )
        held = ledger.reserved_usd
        if spent + held >= self.max_usd:
            raise BudgetExceeded(
                f"Money budget reached: ${spent:.4f} spent{_held(f'${held:.4f}', held)} of "
                f"${self.max_usd:.4f}. The next model call was not made. Raise the max_usd "
                "setting (--max-usd) to continue.",
                budget="usd",
                used=spent,
                cap=self.max_usd,
            )

    def _check_wall_time(self) -> None:
        if self.max_wall_seconds is None:
            return
        elapsed = time.monotonic() - self.started_at
        if elapsed >= self.max_wall_seconds:
            raise BudgetExceeded(
                f"Time budget reached: the session has run {_duration(elapsed)} of the "
                f"{_duration(self.max_wall_seconds)} allowed. The next model call was not made. "
                "Raise the max_wall_seconds setting (--max-minutes) to continue.",
                budget="wall_time",
                used=elapsed,
                cap=self.max_wall_seconds,
            )


def _held(amount: str, held: float) -> str:
    """The words for what calls in flight hold, when any are in flight."""
    return f" and {amount} more held by calls in flight" if held else ""


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"
