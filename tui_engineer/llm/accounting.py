"""What a model call costs and may cost: prompt sizes, each reply's usage (the server's numbers,
else estimated as chars / 4), and the session budget checked before a call, fitted into its
reply cap, and checked again while a reply streams in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tui_engineer.llm.tokens import PromptCounter
from tui_engineer.llm.usage import Budget, CallUsage, UsageLedger, cost_usd, estimate_tokens
from tui_engineer.llm.window import MIN_REPLY_TOKENS

Message = dict[str, str]

DEFAULT_OUTPUT_ESTIMATE = 1024  # tokens assumed for a reply when the caller sets no output cap

# The tokens this task's own call holds, so its stream is not cut for its own reserve. A
# ContextVar: each asyncio task (each step prepared side by side) sees its own.
_own_reserve: ContextVar[int] = ContextVar("own_reserve", default=0)


class CallAccounts:
    """One session's ledger and budget, and how they are applied to each call."""

    def __init__(
        self, model: str, ledger: UsageLedger, budget: Budget, tokens: PromptCounter
    ) -> None:
        self.model = model
        self.ledger = ledger
        self.budget = budget
        # The server's tokenizer where it has one (llama.cpp), else chars / 4: llm/tokens.py.
        self.tokens = tokens

    def prompt_tokens(self, conversation: list[Message]) -> int:
        """The prompt's size: the server's count where measured, else chars / 4 (+ framing)."""
        return self.tokens.count(conversation)

    def usage(
        self, conversation: list[Message], text: str, reported: Any, model: str | None = None
    ) -> CallUsage:
        """One reply's usage: what the server `reported`, else estimated; priced by the
        client's model name, else by the name the server answered with."""
        if reported is not None:
            prompt, completion, estimated = (
                reported.prompt_tokens,
                reported.completion_tokens,
                False,
            )
        else:
            prompt, completion, estimated = (
                self.prompt_tokens(conversation),
                estimate_tokens(text),
                True,
            )
        usd = cost_usd(self.model, prompt, completion)
        if usd is None and model:
            usd = cost_usd(model, prompt, completion)
        return CallUsage(prompt, completion, usd, estimated=estimated)

    def check(self, conversation: list[Message], max_output_tokens: int | None) -> None:
        """Refuse (BudgetExceeded) a call that could overspend."""
        expected_output = max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        self.budget.check(
            self.ledger, next_prompt_tokens=self.prompt_tokens(conversation) + expected_output
        )

    @contextmanager
    def reserve(self, conversation: list[Message], max_output_tokens: int | None) -> Iterator[None]:
        """Hold the call's prompt and reply cap (and their price) in the ledger while it is in
        flight, so calls made side by side are checked against what the others may still
        spend. Taken right after `check`, with no await between: no other call can slip in."""
        output = max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        prompt = self.prompt_tokens(conversation)
        tokens, usd = prompt + output, cost_usd(self.model, prompt, output) or 0.0
        ledger = self.ledger
        ledger.reserved_tokens += tokens
        ledger.reserved_usd += usd
        own = _own_reserve.set(tokens)
        try:
            yield
        finally:
            _own_reserve.reset(own)
            ledger.reserved_tokens -= tokens
            ledger.reserved_usd -= usd

    def fit_reply(self, conversation: list[Message], max_output_tokens: int | None) -> int | None:
        """Shrink the reply limit to what the token budget has left, so a small budget still
        allows calls (and can never be overrun by one), rather than refusing them all."""
        room = self.budget.reply_room(self.ledger, self.prompt_tokens(conversation))
        if room is None or room < MIN_REPLY_TOKENS:
            return max_output_tokens  # no cap, or too little left: the budget check refuses
        return room if max_output_tokens is None else min(max_output_tokens, room)

    def check_mid_stream(self, conversation: list[Message], prompt: int, parts: list[str]) -> None:
        """Cut the stream as soon as the token budget runs out, counting the partial reply."""
        cap = self.budget.max_tokens
        if cap is None:
            return
        so_far = prompt + (sum(map(len, parts)) + 3) // 4  # chars / 4, as estimate_tokens
        others = self.ledger.reserved_tokens - _own_reserve.get()  # calls in flight beside it
        if self.ledger.total_tokens + others + so_far > cap:
            self.ledger.add(self.usage(conversation, "".join(parts), None))
            raise self.budget.tokens_exceeded(self.ledger.total_tokens)
