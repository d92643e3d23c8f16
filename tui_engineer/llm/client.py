"""The model client: chat completions from any OpenAI-compatible server through the `openai` SDK.

What it adds on top of the SDK:
- streaming with text deltas handed to `on_text`, and a non-streaming fallback (remembered for the
  session) for servers that refuse `stream=true` or `stream_options`;
- usage per call into a `UsageLedger` (estimated as chars/4 when the server reports none);
- budgets checked before every call, continuations included;
- replies cut off by the token limit are continued (`max_continuations`) or refused, never
  used half;
- a stream dropped mid-way, a malformed chunk, an error event inside the stream or an empty reply
  is retried from scratch a bounded number of times (`on_reset` tells the consumer why and to drop
  what it showed); 429/5xx/connection errors are retried by the SDK itself (`max_retries`);
- an idle timeout (no bytes for `idle_timeout` seconds), not a total one: a slow but live stream
  runs on, a hung server is given up on; the session budgets bound the total;
- the reply cap enforced by the client as well: a server that streams more pieces than the cap
  allows ignored `max_completion_tokens` (llama-cpp-python, older llama-server and llamafile
  read only `max_tokens`): the reply is cut there like a "length" finish, and later calls send
  the cap as `max_tokens`;
- budgets enforced during a stream: when the token or time budget runs out mid-reply the stream
  is cancelled (BudgetExceeded, with the partial reply counted in the ledger);
- the context window: a call whose prompt cannot fit is not made, the reply cap is lowered to
  what fits, and a reply cut off at the window is not continued (the error names the window);
- SDK exceptions become `LLMError`s with actionable messages that never contain the API key
  (llm/error_mapping.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai

from tui_engineer.llm.error_mapping import ErrorMapper, server_message
from tui_engineer.llm.errors import (
    ContextWindowExceeded,
    LLMError,
    MissingApiKey,
    ModelReplyError,
    UnknownModel,
)
from tui_engineer.llm.models import model_is_served
from tui_engineer.llm.tokens import PromptCounter
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
ResetCallback = Callable[[], None]
RetryCallback = Callable[[str], None]  # gets the reason a reply was asked again

MIN_REPLY_TOKENS = 256  # a reply shorter than this is of no use: the call is not worth making
DEFAULT_OUTPUT_ESTIMATE = 1024  # tokens assumed for a reply when the caller sets no output cap
DROPPED_STREAM_RETRIES = 2  # a broken reply (cut, malformed, error event, empty): retries
DEFAULT_IDLE_TIMEOUT = 60.0  # seconds without a byte from the server before giving up on a call
CONNECT_TIMEOUT = 10.0
# Content chunks beyond the reply cap before the client cuts the stream itself. A server sends at
# least one token per chunk, so more chunks than the cap means it ignored the cap; the slack
# only forgives a server that splits its last token.
CAP_SLACK_CHUNKS = 2
DEFAULT_CONTEXT_WINDOW = 16_384  # tokens, when neither the config nor the server says
# A local model that answers nothing at all is most often given the wrong chat template: a model
# file without one (a base model) makes llama-cpp-python fall back to llama-2's format.
EMPTY_REPLY_HINT = (
    "A local model that answers nothing is often missing its chat template (base models have "
    "none; the server then falls back to another model's format): start the server with the "
    "model's chat format (llama-cpp-python: --chat_format gemma, chatml…; llama-server: --jinja "
    "or --chat-template), or pick an instruction-tuned model."
)
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
    retries: int = 0  # broken replies thrown away and asked again


@dataclass
class _Reply:
    """One HTTP call's outcome."""

    text: str
    finish_reason: str
    model: str
    usage: CallUsage


class _StreamDropped(Exception):
    """A reply that broke and may be asked again: `reason` says how, for the user."""

    def __init__(self, partial: str, cause: Exception | None, reason: str = "dropped") -> None:
        super().__init__(f"stream {reason}")
        self.partial = partial
        self.cause = cause
        self.reason = reason


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
        timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_continuations: int = 2,
        context_window: int | None = None,
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
        self.context_window = context_window  # tokens; None until learned from the server
        self._window_asked = context_window is not None
        self._window_assumed = False  # True when neither the config nor the server said
        self.retries = 0  # broken replies retried in this session
        self._key = api_key
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=max_retries,
            # `read` is per read: an idle timeout. A live stream may run as long as it sends.
            timeout=openai.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
        )
        self.base_url = str(self._sdk.base_url).rstrip("/")
        self._streaming_ok = True  # False once the server refused stream=true
        # The server's tokenizer where it has one (llama.cpp), else chars / 4: llm/tokens.py.
        self._tokens = PromptCounter(self._sdk, self.base_url, model)
        self._stream_options_ok = True  # False once it refused stream_options
        # OpenAI's name for the reply cap; "max_tokens" once the server is seen ignoring it.
        self._cap_param = "max_completion_tokens"

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
            timeout=getattr(settings, "stream_idle_timeout", DEFAULT_IDLE_TIMEOUT),
            context_window=getattr(settings, "context_window", None),
        )

    # ----- public API

    async def complete(
        self,
        messages: list[Message],
        *,
        on_text: TextCallback | None = None,
        on_reset: ResetCallback | None = None,
        on_retry: RetryCallback | None = None,
        stream: bool = True,
        max_output_tokens: int | None = None,
    ) -> Completion:
        """Ask the model; return the whole reply text.

        `on_text` receives text as it arrives (the whole text once when not streaming).
        Continuations after a "length" cut keep feeding `on_text`, so a consumer sees one
        continuous text. If a stream drops mid-way it is retried from scratch: `on_reset` is
        called first, and the consumer should discard what `on_text` gave it; `on_retry` gets
        why ("dropped", "malformed", "error event", "empty").
        `max_output_tokens` is sent as `max_completion_tokens` (lowered to fit the window), or
        as `max_tokens` once this server was seen ignoring the former; a stream is cut there.
        Raises BudgetExceeded before any call that would overspend, LLMError subclasses otherwise.
        """
        conversation = list(messages)
        await self.learn_context_window()
        parts: list[str] = []
        calls: list[CallUsage] = []
        retries_before = self.retries
        for continued in range(self.max_continuations + 1):
            await self._tokens.measure(conversation)
            cap = self._fit_reply_cap(conversation, max_output_tokens)
            reply = await self._call_with_drop_retries(
                conversation, on_text, (on_reset, on_retry), stream, cap
            )
            parts.append(reply.text)
            calls.append(reply.usage)
            if reply.finish_reason != "length":
                done = self._finished(parts, calls, reply, continued)
                done.retries = self.retries - retries_before
                return done
            self._refuse_cut_at_window(reply, cap, max_output_tokens)
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
        if not model_is_served(self.model, names):
            shown = ", ".join(sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise UnknownModel(self._errors.unknown_model_text(f"It serves: {shown}."))

    async def learn_context_window(self) -> int:
        """The context window: from the config, else the server (llama.cpp's /props, a models
        list with n_ctx / context_length metadata), else DEFAULT_CONTEXT_WINDOW. Asked once."""
        if not self._window_asked:
            self._window_asked = True
            learned = await self._window_from_server()
            self._window_assumed = learned is None
            self.context_window = learned or DEFAULT_CONTEXT_WINDOW
        return self.context_window or DEFAULT_CONTEXT_WINDOW

    async def _window_from_server(self) -> int | None:
        root = self.base_url.removesuffix("/v1")
        quick = self._sdk.with_options(max_retries=0, timeout=5.0)
        for url in (f"{root}/props", f"{self.base_url}/models"):
            try:
                body = await quick.get(url, cast_to=object)
            except (openai.OpenAIError, ValueError):
                continue
            found = _window_in(body)
            if found:
                return found
        return None

    async def aclose(self) -> None:
        await self._sdk.close()

    # ----- one logical call: budget, request, drop retries, accounting

    async def _call_with_drop_retries(
        self,
        conversation: list[Message],
        on_text: TextCallback | None,
        callbacks: tuple[ResetCallback | None, RetryCallback | None],
        stream: bool,
        max_output_tokens: int | None,
    ) -> _Reply:
        on_reset, on_retry = callbacks
        for attempt in range(DROPPED_STREAM_RETRIES + 1):
            limit = self._fit_reply(conversation, max_output_tokens)
            self._check_budget(conversation, limit)
            try:
                reply = await self._request(conversation, on_text, stream, limit)
                if not reply.text.strip() and reply.finish_reason == "stop":
                    self.ledger.add(reply.usage)
                    raise _StreamDropped("", None, "empty")
            except _StreamDropped as drop:
                if drop.reason != "empty":  # the server did work (and may bill it): count it
                    self.ledger.add(self._usage(conversation, drop.partial, None))
                if attempt == DROPPED_STREAM_RETRIES:
                    raise self._broken_reply(drop, conversation) from None
                self.retries += 1
                if on_retry is not None:
                    on_retry(drop.reason)
                if on_reset is not None:
                    on_reset()
                continue
            self.ledger.add(reply.usage)
            return reply
        raise AssertionError("unreachable")

    def _broken_reply(self, drop: _StreamDropped, conversation: list[Message]) -> LLMError:
        tries = DROPPED_STREAM_RETRIES + 1
        if drop.reason == "empty":
            return ModelReplyError(
                f"The model {self.model} at {self.base_url} returned an empty reply {tries} "
                f"times in a row. {EMPTY_REPLY_HINT}"
            )
        if drop.reason in ("malformed", "error event"):
            detail = self._errors.redact(str(drop.cause or ""))[:300]
            return ModelReplyError(
                f"The server at {self.base_url} sent a broken reply ({drop.reason}: {detail}) "
                f"{tries} times in a row. Check the server and try again."
            )
        window = None if self._window_assumed else self.context_window
        prompt = self._prompt_tokens(conversation)
        return self._errors.dropped_stream(drop.cause, tries, prompt, window)

    # ----- the context window

    def _prompt_tokens(self, conversation: list[Message]) -> int:
        """The prompt's size: the server's count where measured, else chars / 4 (+ framing)."""
        return self._tokens.count(conversation)

    def _fit_reply_cap(self, conversation: list[Message], wanted: int | None) -> int | None:
        """The reply cap that fits the window after this prompt; refuse a prompt that leaves
        no useful room instead of sending it (a server would reject or drop it)."""
        window = self.context_window
        if window is None:
            return wanted
        prompt = self._prompt_tokens(conversation)
        room = window - prompt
        if room < min(MIN_REPLY_TOKENS, wanted or MIN_REPLY_TOKENS):
            raise ContextWindowExceeded(
                f"The prompt (about {prompt:,} tokens) does not fit the model's context window "
                f"of {window:,} tokens with room for a reply, so it was not sent. Ask for a "
                "smaller change, lower context_budget, or set context_window if the server "
                "allows more."
            )
        return room if wanted is None else min(wanted, room)

    def _fit_reply(self, conversation: list[Message], max_output_tokens: int | None) -> int | None:
        """Shrink the reply limit to what the token budget has left, so a small budget still
        allows calls (and can never be overrun by one), rather than refusing them all."""
        room = self.budget.reply_room(self.ledger, self._prompt_tokens(conversation))
        if room is None or room < MIN_REPLY_TOKENS:
            return max_output_tokens  # no cap, or too little left: the budget check refuses
        return room if max_output_tokens is None else min(max_output_tokens, room)

    def _refuse_cut_at_window(self, reply: _Reply, cap: int | None, wanted: int | None) -> None:
        """A reply cut because the window is full cannot be continued: the continuation would
        only overflow it (a server then drops the stream)."""
        window = self.context_window
        if window is None:
            return
        used = reply.usage.prompt_tokens + reply.usage.completion_tokens
        cut_by_window = (cap is not None and wanted is not None and cap < wanted) or (
            used >= window - MIN_REPLY_TOKENS
        )
        if cut_by_window:
            raise ContextWindowExceeded(
                f"The reply from {self.model} was cut off at the model's context window "
                f"({window:,} tokens: about {reply.usage.prompt_tokens:,} of prompt and "
                f"{reply.usage.completion_tokens:,} of reply), so it was not continued or used. "
                "Ask for a smaller change, lower context_budget, or use a larger context."
            )

    def _check_budget(self, conversation: list[Message], max_output_tokens: int | None) -> None:
        expected_output = max_output_tokens or DEFAULT_OUTPUT_ESTIMATE
        self.budget.check(
            self.ledger, next_prompt_tokens=self._prompt_tokens(conversation) + expected_output
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
            params[self._cap_param] = max_output_tokens
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
        parts: list[str] = []
        remaining = self.budget.seconds_left()
        try:
            async with asyncio.timeout(remaining):  # the time budget, during the stream too
                return await self._stream_into(params, conversation, on_text, parts)
        except TimeoutError:
            if remaining is None or self.budget.seconds_left() > 0:
                raise  # not ours: an SDK/transport timeout
            self.ledger.add(self._usage(conversation, "".join(parts), None))
            raise self.budget.time_exceeded() from None

    async def _stream_into(
        self,
        params: dict[str, Any],
        conversation: list[Message],
        on_text: TextCallback | None,
        parts: list[str],
    ) -> _Reply:
        extra: dict[str, Any] = {"stream": True}
        if self._stream_options_ok:
            extra["stream_options"] = {"include_usage": True}
        chunks = await self._sdk.chat.completions.create(**params, **extra)
        finish: str | None = None
        model, usage = self.model, None
        prompt = self._prompt_tokens(conversation)
        cap = params.get(self._cap_param)
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
                            self._check_budget_mid_stream(conversation, prompt, parts)
                        finish = choice.finish_reason or finish
                    if cap is not None and len(parts) > cap + CAP_SLACK_CHUNKS:
                        self._learn_cap_ignored()
                        finish, usage = "length", None  # cut here; its usage never comes
                        break
            except openai.APIConnectionError as err:  # also idle timeouts between chunks
                raise _StreamDropped("".join(parts), err) from None
            except (json.JSONDecodeError, AttributeError, TypeError) as err:
                raise _StreamDropped("".join(parts), err, "malformed") from None
            except openai.APIStatusError:
                raise
            except openai.APIError as err:  # an {"error": ...} event inside the stream
                raise _StreamDropped("".join(parts), err, "error event") from None
        if finish is None:  # the body ended without saying why: treat as a cut connection
            raise _StreamDropped("".join(parts), None)
        return self._reply(conversation, "".join(parts), finish, model, usage)

    def _learn_cap_ignored(self) -> None:
        """The server sent more than the reply cap allows: it does not read the cap under the
        name it was sent. Servers that ignore OpenAI's newer name read `max_tokens`."""
        if self._cap_param == "max_completion_tokens":
            self._cap_param = "max_tokens"

    def _check_budget_mid_stream(
        self, conversation: list[Message], prompt: int, parts: list[str]
    ) -> None:
        """Cut the stream as soon as the token budget runs out, counting the partial reply."""
        cap = self.budget.max_tokens
        if cap is None:
            return
        so_far = prompt + (sum(map(len, parts)) + 3) // 4  # chars / 4, as estimate_tokens
        if self.ledger.total_tokens + so_far > cap:
            self.ledger.add(self._usage(conversation, "".join(parts), None))
            raise self.budget.tokens_exceeded(self.ledger.total_tokens)

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
        cap = params.get(self._cap_param)
        if cap is not None and response.usage and response.usage.completion_tokens > cap:
            self._learn_cap_ignored()  # too late for this reply, in time for the next
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
                self._prompt_tokens(conversation),
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
        if not text.strip():  # e.g. an empty reply cut by the token limit
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


_WINDOW_KEYS = ("n_ctx", "context_length", "max_model_len", "context_window")


def _window_in(body: Any) -> int | None:
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
        found = _window_in(value)
        if found:
            return found
    return None
