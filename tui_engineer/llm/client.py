"""The model client: chat completions from any OpenAI-compatible server through the `openai` SDK.

What it adds on top of the SDK:
- streaming with text deltas handed to `on_text`, and a non-streaming fallback (remembered for the
  session) for servers that refuse `stream=true` or `stream_options`;
- usage per call into a `UsageLedger` (estimated as chars/4 when the server reports none);
- budgets checked before every call, continuations included;
- replies cut off by the token limit are continued (`max_continuations`) or refused, never
  used half;
- a stream dropped mid-way is retried from scratch (`on_reset` tells the consumer to drop what it
  showed); 429/5xx/timeouts/connection errors are retried by the SDK itself (`max_retries`);
- SDK exceptions become `LLMError`s with actionable messages that never contain the API key
  (llm/error_mapping.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai

from tui_engineer.llm.error_mapping import ErrorMapper, server_message
from tui_engineer.llm.errors import (
    LLMError,
    MissingApiKey,
    ModelReplyError,
    UnknownModel,
)
from tui_engineer.llm.usage import (
    Budget,
    CallUsage,
    UsageLedger,
    cost_usd,
    estimate_tokens,
    price_for,
)

Message = dict[str, str]
TextCallback = Callable[[str], None]

MIN_REPLY_TOKENS = 256  # a reply shorter than this is of no use: the call is not worth making
DEFAULT_OUTPUT_ESTIMATE = 1024  # tokens assumed for a reply when the caller sets no output cap
DROPPED_STREAM_RETRIES = 2  # a stream cut mid-way is retried from scratch at most this often
CONTINUE_PROMPT = (
    "Your previous reply was cut off by the output token limit. Continue exactly where you "
    "stopped: do not repeat anything and do not add any preamble."
)


@dataclass
class Completion:
    text: str
    finish_reason: str
    usage: CallUsage  # all calls that produced this text, continuations included
    model: str
    continued: int = 0  # how many continuation calls were stitched


@dataclass
class _Reply:
    """One HTTP call's outcome."""

    text: str
    finish_reason: str
    model: str
    usage: CallUsage


class _StreamDropped(Exception):
    def __init__(self, partial: str, cause: Exception | None) -> None:
        super().__init__("stream dropped")
        self.partial = partial
        self.cause = cause


class ModelClient:
    """One session's connection to the model. Not thread-safe; use from one event loop."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        api_key_env: str = "OPENAI_API_KEY",
        ledger: UsageLedger | None = None,
        budget: Budget | None = None,
        max_retries: int = 3,
        timeout: float = 120.0,
        max_continuations: int = 2,
    ) -> None:
        if not api_key:
            raise MissingApiKey(
                f"No API key: set {api_key_env} (the variable named by the api_key_env "
                f"setting) to your key, e.g. `export {api_key_env}=sk-...`. A local server "
                f"without authentication still needs some value: `export {api_key_env}=local` "
                "works."
            )
        _refuse_unenforceable_usd_cap(model, budget)
        self.model = model
        self.api_key_env = api_key_env
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.budget = budget if budget is not None else Budget()
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_continuations = max_continuations
        self._key = api_key
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=max_retries,
            timeout=timeout,
        )
        self.base_url = str(self._sdk.base_url).rstrip("/")
        self._streaming_ok = True  # False once the server refused stream=true
        self._stream_options_ok = True  # False once it refused stream_options

    @classmethod
    def from_settings(
        cls, settings: Any, ledger: UsageLedger | None = None, budget: Budget | None = None
    ) -> ModelClient:
        """Build from `tui_engineer.config.Settings` (duck-typed). The budget comes from the
        settings unless one is given."""
        if budget is None:
            budget = Budget(
                max_tokens=settings.max_tokens,
                max_usd=settings.max_usd,
                max_wall_seconds=settings.max_wall_seconds,
            )
        return cls(
            model=settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            api_key_env=settings.api_key_env,
            ledger=ledger,
            budget=budget,
        )

    # ----- public API

    async def complete(
        self,
        messages: list[Message],
        *,
        on_text: TextCallback | None = None,
        on_reset: Callable[[], None] | None = None,
        stream: bool = True,
        max_output_tokens: int | None = None,
    ) -> Completion:
        """Ask the model; return the whole reply text.

        `on_text` receives text as it arrives (the whole text once when not streaming).
        Continuations after a "length" cut keep feeding `on_text`, so a consumer sees one
        continuous text. If a stream drops mid-way it is retried from scratch: `on_reset` is
        called first, and the consumer should discard what `on_text` gave it so far.
        `max_output_tokens` is sent as `max_completion_tokens`.
        Raises BudgetExceeded before any call that would overspend, LLMError subclasses otherwise.
        """
        conversation = list(messages)
        parts: list[str] = []
        calls: list[CallUsage] = []
        for continued in range(self.max_continuations + 1):
            reply = await self._call_with_drop_retries(
                conversation, on_text, on_reset, stream, max_output_tokens
            )
            parts.append(reply.text)
            calls.append(reply.usage)
            if reply.finish_reason != "length":
                return self._finished(parts, calls, reply, continued)
            conversation += [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": CONTINUE_PROMPT},
            ]
        raise ModelReplyError(
            f"The reply from {self.model} was cut off by the token limit even after "
            f"{self.max_continuations} continuation(s), so it was not used. Ask for a smaller "
            "change, or allow longer replies."
        )

    async def check_connection(self) -> None:
        """Make sure the server answers, accepts the key and serves the model (GET /models)."""
        try:
            page = await self._sdk.models.list()
        except openai.OpenAIError as err:
            raise self._errors.sdk_error(err) from None
        names = [m.id for m in page.data]
        if names and self.model not in names:
            shown = ", ".join(sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise UnknownModel(self._errors.unknown_model_text(f"It serves: {shown}."))

    async def aclose(self) -> None:
        await self._sdk.close()

    # ----- one logical call: budget, request, drop retries, accounting

    async def _call_with_drop_retries(
        self,
        conversation: list[Message],
        on_text: TextCallback | None,
        on_reset: Callable[[], None] | None,
        stream: bool,
        max_output_tokens: int | None,
    ) -> _Reply:
        for attempt in range(DROPPED_STREAM_RETRIES + 1):
            limit = self._fit_reply(conversation, max_output_tokens)
            self._check_budget(conversation, limit)
            try:
                reply = await self._request(conversation, on_text, stream, limit)
            except _StreamDropped as drop:
                # The server did work (and may bill it): count it, estimated.
                self.ledger.add(self._usage(conversation, drop.partial, None))
                if attempt == DROPPED_STREAM_RETRIES:
                    raise self._errors.dropped_stream(
                        drop.cause, DROPPED_STREAM_RETRIES + 1
                    ) from None
                if on_reset is not None:
                    on_reset()
                continue
            self.ledger.add(reply.usage)
            return reply
        raise AssertionError("unreachable")

    def _fit_reply(self, conversation: list[Message], max_output_tokens: int | None) -> int | None:
        """Shrink the reply limit to what the token budget has left, so a small budget still
        allows calls (and can never be overrun by one), rather than refusing them all."""
        room = self.budget.reply_room(self.ledger, _prompt_tokens(conversation))
        if room is None or room < MIN_REPLY_TOKENS:
            return max_output_tokens  # no cap, or too little left: the budget check refuses
        return room if max_output_tokens is None else min(max_output_tokens, room)

    def _check_budget(self, conversation: list[Message], max_output_tokens: int | None) -> None:
        expected_output = max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        self.budget.check(
            self.ledger, next_prompt_tokens=_prompt_tokens(conversation) + expected_output
        )

    async def _request(
        self,
        conversation: list[Message],
        on_text: TextCallback | None,
        stream: bool,
        max_output_tokens: int | None,
    ) -> _Reply:
        """Stream if we may; fall back (for the session) when the server refuses streaming."""
        params: dict[str, Any] = {"model": self.model, "messages": conversation}
        if max_output_tokens is not None:
            params["max_completion_tokens"] = max_output_tokens
        while stream and self._streaming_ok:
            try:
                return await self._streamed(params, conversation, on_text)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
                if not self._learn_streaming_refusal(err):
                    raise self._errors.sdk_error(err) from None
            except openai.OpenAIError as err:
                raise self._errors.sdk_error(err) from None
        try:
            return await self._whole(params, conversation, on_text)
        except openai.OpenAIError as err:
            raise self._errors.sdk_error(err) from None

    def _learn_streaming_refusal(self, err: openai.APIStatusError) -> bool:
        """True if the 400/422 was about streaming, after noting what to avoid from now on."""
        text = f"{err.param or ''} {server_message(err)}".lower()
        if self._stream_options_ok and "stream_options" in text:
            self._stream_options_ok = False
            return True
        if "stream" in text:
            self._streaming_ok = False
            return True
        return False

    async def _streamed(
        self, params: dict[str, Any], conversation: list[Message], on_text: TextCallback | None
    ) -> _Reply:
        extra: dict[str, Any] = {"stream": True}
        if self._stream_options_ok:
            extra["stream_options"] = {"include_usage": True}
        chunks = await self._sdk.chat.completions.create(**params, **extra)
        parts: list[str] = []
        finish: str | None = None
        model, usage = self.model, None
        async with chunks:
            try:
                async for chunk in chunks:
                    model = chunk.model or model
                    usage = chunk.usage or usage
                    for choice in chunk.choices[:1]:
                        delta = choice.delta.content if choice.delta else None
                        if delta:
                            parts.append(delta)
                            if on_text is not None:
                                on_text(delta)
                        finish = choice.finish_reason or finish
            except openai.APIConnectionError as err:  # also timeouts between chunks
                raise _StreamDropped("".join(parts), err) from None
        if finish is None:  # the body ended without saying why: treat as a cut connection
            raise _StreamDropped("".join(parts), None)
        return self._reply(conversation, "".join(parts), finish, model, usage)

    async def _whole(
        self, params: dict[str, Any], conversation: list[Message], on_text: TextCallback | None
    ) -> _Reply:
        response = await self._sdk.chat.completions.create(**params)
        if not response.choices:
            raise ModelReplyError(f"The server at {self.base_url} returned a reply with no text.")
        choice = response.choices[0]
        text = choice.message.content or ""
        if text and on_text is not None:
            on_text(text)
        model = response.model or self.model
        return self._reply(
            conversation, text, choice.finish_reason or "stop", model, response.usage
        )

    # ----- results and accounting

    def _reply(
        self, conversation: list[Message], text: str, finish: str, model: str, usage: Any
    ) -> _Reply:
        return _Reply(text, finish, model, self._usage(conversation, text, usage, model))

    def _usage(
        self, conversation: list[Message], text: str, reported: Any, model: str | None = None
    ) -> CallUsage:
        if reported is not None:
            prompt, completion, estimated = (
                reported.prompt_tokens,
                reported.completion_tokens,
                False,
            )
        else:
            prompt, completion, estimated = (
                _prompt_tokens(conversation),
                estimate_tokens(text),
                True,
            )
        usd = cost_usd(self.model, prompt, completion)
        if usd is None and model:
            usd = cost_usd(model, prompt, completion)
        return CallUsage(prompt, completion, usd, estimated=estimated)

    def _finished(
        self, parts: list[str], calls: list[CallUsage], last: _Reply, continued: int
    ) -> Completion:
        text = "".join(parts)
        if last.finish_reason == "content_filter":
            raise ModelReplyError(
                f"The server's content filter stopped the reply from {self.model}, so it was "
                "not used. Rephrase the request and try again."
            )
        if not text.strip():
            raise ModelReplyError(
                f"The model {self.model} at {self.base_url} returned an empty reply. Try again, "
                "or pick another model."
            )
        return Completion(text, last.finish_reason, CallUsage.combine(calls), last.model, continued)

    # ----- errors

    @property
    def _errors(self) -> ErrorMapper:
        # Built per use so the messages follow the client's current settings.
        return ErrorMapper(
            model=self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            api_key=self._key,
            max_retries=self.max_retries,
            timeout=self.timeout,
        )


def _refuse_unenforceable_usd_cap(model: str, budget: Budget | None) -> None:
    # Fail at the start rather than after the first (uncountable) call.
    if budget is not None and budget.max_usd is not None and price_for(model) is None:
        raise LLMError(
            f"A money budget is set (max_usd ${budget.max_usd:g}) but the price of '{model}' is "
            "unknown, so spending cannot be counted. Unset max_usd (--max-usd) and use a token "
            "budget (--max-tokens) instead."
        )


def _prompt_tokens(conversation: list[Message]) -> int:
    # ~4 tokens of framing per message, as chat formats add role markers.
    return sum(estimate_tokens(str(m.get("content", ""))) + 4 for m in conversation)
