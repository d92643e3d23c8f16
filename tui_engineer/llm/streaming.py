"""One model call over HTTP: streamed where the server allows it, retried when the reply breaks.

- text deltas go to `on_text` as they arrive; a server that refuses `stream=true` or
  `stream_options` gets a non-streaming request instead (remembered for the session);
- a stream dropped mid-way, a malformed chunk, an error event inside the stream or an empty reply
  is retried from scratch a bounded number of times (llm/broken_replies.py; `on_reset` tells
  the consumer why and to drop what it showed); 429/5xx/connection errors are retried by the
  SDK itself;
- an HTML page answered with status 200 is a wrong base URL while the server has never answered
  properly (NotTheApi, at once), and a proxy's or gateway's passing error page once it has: then
  it is retried like a 502/503, backing off, a bounded number of times, each retry said;
- budgets are enforced during a stream: when the token or time budget runs out mid-reply the
  stream is cancelled (BudgetExceeded, with the partial reply counted in the ledger);
- a stream that overruns the reply cap is cut there (llm/reply_cap.py);
- a stream that plainly is not what was asked is stopped early (llm/reply_watch.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from tui_engineer.llm.accounting import CallAccounts, Message
from tui_engineer.llm.broken_replies import (
    DROPPED_STREAM_RETRIES,
    ERROR_PAGE,
    BrokenChunk,
    StreamDropped,
    backoff,
    retries_spent,
)
from tui_engineer.llm.error_mapping import ErrorMapper, server_message
from tui_engineer.llm.errors import ModelReplyError
from tui_engineer.llm.reply_cap import ReplyCap
from tui_engineer.llm.reply_watch import COMPLETE, OFF_TRACK, Expected, ReplyWatch
from tui_engineer.llm.tools import ToolCall
from tui_engineer.llm.usage import CallUsage

TextCallback = Callable[[str], None]
ResetCallback = Callable[[], None]
RetryCallback = Callable[[str], None]  # gets the reason a reply was asked again

DEFAULT_CALL_TIMEOUT = 1800.0  # seconds one call may take in all (call_timeout)


@dataclass
class Reply:
    """One HTTP call's outcome."""

    text: str
    finish_reason: str
    model: str
    usage: CallUsage
    tool_calls: list[ToolCall] = field(default_factory=list)  # the model asked for its tools


def _text_of(content: Any) -> str:
    """A delta's or message's `content`: text, or nothing; anything else is the server's fault."""
    if content is None or isinstance(content, str):
        return content or ""
    raise BrokenChunk(f"a 'content' that is not text ({type(content).__name__})")


def _choices_of(chunk: Any) -> list[Any]:
    """A chunk's choices; `null` is allowed only beside usage (the last chunk)."""
    if chunk.choices is None:
        if chunk.usage is None:
            raise BrokenChunk("a chunk whose 'choices' is null")
        return []
    return list(chunk.choices[:1])


class ChatCalls:
    """Makes one logical call (budget, request, drop retries, accounting) and remembers, for the
    session, what the server refused: streaming, `stream_options`, the cap's newer name."""

    def __init__(
        self,
        sdk: openai.AsyncOpenAI,
        *,
        model: str,
        base_url: str,
        accounts: CallAccounts,
        errors: Callable[[], ErrorMapper],
    ) -> None:
        self._sdk = sdk
        self.model = model
        self.base_url = base_url
        self.accounts = accounts
        self._errors = errors  # built per use so the messages follow the client's settings
        self.retries = 0  # broken replies retried in this session
        self._streaming_ok = True  # False once the server refused stream=true
        self._stream_options_ok = True  # False once it refused stream_options
        self.cap = ReplyCap()
        self.tools_ok = True  # False once the server refused a request with tools
        self.on_tools_refused: Callable[[str], None] | None = None
        # True once the server answered properly: an HTML page is then a passing error page.
        self.answered = False
        self.call_limit: float | None = DEFAULT_CALL_TIMEOUT  # seconds one call may take in all

    async def call(
        self,
        conversation: list[Message],
        on_text: TextCallback | None,
        callbacks: tuple[ResetCallback | None, RetryCallback | None],
        stream: bool,
        max_output_tokens: int | None,
        known_window: int | None,
        expected: Expected | None = None,
        tools: dict[str, Any] | None = None,
    ) -> Reply:
        """One reply, asked again from scratch while it breaks. `known_window` is the context
        window when it was configured or learned (not assumed): a dropped stream's error
        names it. A streamed reply with no sign of `expected` early is stopped
        (OffTrackReply)."""
        accounts = self.accounts
        on_reset, on_retry = callbacks
        for attempt in range(DROPPED_STREAM_RETRIES + 1):
            limit = accounts.fit_reply(conversation, max_output_tokens)
            accounts.check(conversation, limit)
            try:
                with accounts.reserve(conversation, limit):
                    reply = await self._request(
                        conversation, on_text, stream, limit, expected, tools or {}
                    )
                # Tool calls where none may be made (past the last round) say nothing either.
                usable = reply.tool_calls and (tools or {}).get("tool_choice") == "auto"
                empty = not reply.text.strip() and not usable
                if empty and reply.finish_reason in ("stop", "tool_calls"):
                    accounts.ledger.add(reply.usage)
                    raise StreamDropped("", None, "empty")
            except StreamDropped as drop:
                if drop.reason not in ("empty", ERROR_PAGE):  # the server did work: count it
                    accounts.ledger.add(accounts.usage(conversation, drop.partial, None))
                if attempt == DROPPED_STREAM_RETRIES:
                    raise retries_spent(
                        drop, model=self.model, base_url=self.base_url, errors=self._errors(),
                        prompt_tokens=accounts.prompt_tokens(conversation),
                        known_window=known_window,
                    ) from None  # fmt: skip
                await asyncio.sleep(backoff(drop, attempt))
                self.retries += 1
                if on_retry is not None:
                    on_retry(drop.reason)
                if on_reset is not None:
                    on_reset()
                continue
            accounts.ledger.add(reply.usage)
            self.answered = True
            return reply
        raise AssertionError("unreachable")

    # ----- one HTTP request

    async def _request(
        self,
        conversation: list[Message],
        on_text: TextCallback | None,
        stream: bool,
        max_output_tokens: int | None,
        expected: Expected | None = None,
        tools: dict[str, Any] | None = None,
    ) -> Reply:
        """Stream if we may; fall back (for the session) when the server refuses streaming
        or tools."""
        params: dict[str, Any] = {"model": self.model, "messages": conversation}
        if tools and self.tools_ok:
            params.update(tools)
        self.cap.ask(params, max_output_tokens)
        while stream and self._streaming_ok:
            watch = None
            if expected is not None:
                watch = ReplyWatch(expected, _asked(conversation))
            try:
                return await self._streamed(params, conversation, on_text, watch)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
                if not self._learn_tools_refusal(err, params):
                    if not self._learn_streaming_refusal(err):
                        raise self._errors().sdk_error(err) from None
            except openai.OpenAIError as err:
                raise self._errors().sdk_error(err) from None
        while True:
            try:
                return await self._whole_bounded(params, conversation, on_text)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as err:
                if not self._learn_tools_refusal(err, params):
                    raise self._errors().sdk_error(err) from None
            except openai.OpenAIError as err:
                raise self._errors().sdk_error(err) from None

    def _learn_tools_refusal(self, err: openai.APIStatusError, params: dict[str, Any]) -> bool:
        """True if a request with tools was refused for them (a server or model without tool
        support: Ollama's "does not support tools", llama-server's "--jinja"): the tools are
        left out from now on, said once (`on_tools_refused`), and `params` lose them."""
        if "tools" not in params:
            return False
        text = f"{err.param or ''} {server_message(err)}"
        if "tool" not in text.lower() and "jinja" not in text.lower():
            return False
        self.tools_ok = False
        params.pop("tools", None)
        params.pop("tool_choice", None)
        if self.on_tools_refused is not None:
            self.on_tools_refused(self._errors().redact(text.strip())[:200])
        return True

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
        self,
        params: dict[str, Any],
        conversation: list[Message],
        on_text: TextCallback | None,
        watch: ReplyWatch | None,
    ) -> Reply:
        budget = self.accounts.budget
        parts: list[str] = []
        remaining = budget.seconds_left()
        limits = [x for x in (remaining, self.call_limit) if x is not None]
        try:
            # The time budget and the call's own bound, during the stream too.
            async with asyncio.timeout(min(limits, default=None)) as bound:
                return await self._stream_into(params, conversation, on_text, (parts, watch))
        except TimeoutError:
            if not bound.expired():
                raise  # not ours: an SDK/transport timeout
            self.accounts.ledger.add(self.accounts.usage(conversation, "".join(parts), None))
            if remaining is not None and budget.seconds_left() <= 0:
                raise budget.time_exceeded() from None
            raise self._too_long() from None

    async def _whole_bounded(
        self, params: dict[str, Any], conversation: list[Message], on_text: TextCallback | None
    ) -> Reply:
        try:
            async with asyncio.timeout(self.call_limit) as bound:
                return await self._whole(params, conversation, on_text)
        except TimeoutError:
            if not bound.expired():
                raise
            raise self._too_long() from None

    def _too_long(self) -> ModelReplyError:
        return ModelReplyError(
            f"The reply from the model server at {self.base_url} took longer than "
            f"{self.call_limit:g} s in all (call_timeout), so it was stopped. Raise "
            "call_timeout for a slow model, or ask for a smaller change."
        )

    async def _stream_into(
        self,
        params: dict[str, Any],
        conversation: list[Message],
        on_text: TextCallback | None,
        into: tuple[list[str], ReplyWatch | None],
    ) -> Reply:
        parts, watch = into
        extra: dict[str, Any] = {"stream": True}
        if self._stream_options_ok:
            extra["stream_options"] = {"include_usage": True}
        chunks = await self._sdk.chat.completions.create(**params, **extra)
        if self._errors().is_web_page(chunks.response.headers):
            await chunks.close()
            self._web_page(chunks.response.headers)
        finish: str | None = None
        model, usage = self.model, None
        prompt = self.accounts.prompt_tokens(conversation)
        cap = self.cap.sent(params)
        calls: dict[int, list[str]] = {}  # index → [id, name, arguments so far]
        idle = self._errors().timeout
        async with chunks:
            try:
                # Idle is no text for `idle` seconds, whatever bytes arrive (keep-alive comments,
                # empty deltas): the SDK's read timeout sees only bytes.
                async with asyncio.timeout(idle) as quiet:
                    async for chunk in chunks:
                        model = chunk.model or model
                        usage = chunk.usage or usage
                        for choice in _choices_of(chunk):
                            delta = _text_of(choice.delta.content) if choice.delta else None
                            if choice.delta and choice.delta.tool_calls:
                                _gather_tool_calls(calls, choice.delta.tool_calls)
                                quiet.reschedule(asyncio.get_running_loop().time() + idle)
                            if delta:
                                quiet.reschedule(asyncio.get_running_loop().time() + idle)
                                parts.append(delta)
                                if on_text is not None:
                                    on_text(delta)
                                self.accounts.check_mid_stream(conversation, prompt, parts)
                                if watch is not None:
                                    finish = watch.feed(delta) or finish
                            finish = choice.finish_reason or finish
                        if finish in (OFF_TRACK, COMPLETE):
                            break  # closing the stream stops the server generating
                        if self.cap.stream_overran(len(parts), cap):
                            finish, usage = "length", None  # cut here; its usage never comes
                            break
            except TimeoutError:
                if not quiet.expired():
                    raise  # the time budget's or the call's bound (_streamed)
                raise StreamDropped("".join(parts), None, "idle") from None
            except openai.APIConnectionError as err:  # also idle timeouts between chunks
                raise StreamDropped("".join(parts), err) from None
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                raise StreamDropped("".join(parts), err, "malformed") from None
            except (AttributeError, TypeError, BrokenChunk) as err:
                raise StreamDropped("".join(parts), err, "malformed") from None
            except openai.APIStatusError:
                raise
            except openai.APIError as err:  # an {"error": ...} event inside the stream
                raise StreamDropped("".join(parts), err, "error event") from None
        if finish is None:  # the body ended without saying why: treat as a cut connection
            raise StreamDropped("".join(parts), None)
        if finish == OFF_TRACK and watch is not None:
            self.accounts.ledger.add(self.accounts.usage(conversation, "".join(parts), None))
            raise watch.off_track(self.model)
        reply = self._reply(conversation, "".join(parts), finish, model, usage)
        reply.tool_calls = [ToolCall(*calls[i]) for i in sorted(calls) if calls[i][1]]
        return reply

    async def _whole(
        self, params: dict[str, Any], conversation: list[Message], on_text: TextCallback | None
    ) -> Reply:
        raw = await self._sdk.chat.completions.with_raw_response.create(**params)
        self._web_page(raw.headers)
        response = raw.parse()
        if not response.choices:
            raise ModelReplyError(f"The server at {self.base_url} returned a reply with no text.")
        choice = response.choices[0]
        try:
            text = _text_of(choice.message.content)
        except BrokenChunk as err:
            raise StreamDropped("", err, "malformed") from None
        if text and on_text is not None:
            on_text(text)
        model = response.model or self.model
        reported = response.usage.completion_tokens if response.usage else None
        self.cap.check_whole(reported, self.cap.sent(params))
        reply = self._reply(
            conversation, text, choice.finish_reason or "stop", model, response.usage
        )
        reply.tool_calls = [
            ToolCall(c.id, c.function.name, c.function.arguments or "")
            for c in choice.message.tool_calls or ()
            if getattr(c, "function", None) is not None
        ]
        return reply

    def _web_page(self, headers: Any) -> None:
        """An HTML page: a passing error page once the server has answered properly (retried),
        else a base URL that is not the API (NotTheApi)."""
        if self.answered and self._errors().is_web_page(headers):
            raise StreamDropped("", None, ERROR_PAGE)
        self._errors().refuse_web_page(headers)

    def _reply(
        self, conversation: list[Message], text: str, finish: str, model: str, usage: Any
    ) -> Reply:
        return Reply(text, finish, model, self.accounts.usage(conversation, text, usage, model))


def _gather_tool_calls(calls: dict[int, list[str]], deltas: Any) -> None:
    """A stream sends each tool call in pieces: its id and name first, its arguments after."""
    for piece in deltas:
        index = piece.index if piece.index is not None else len(calls)
        call = calls.setdefault(index, ["", "", ""])
        call[0] = piece.id or call[0] or f"call_{index}"
        if piece.function is not None:
            call[1] += piece.function.name or ""
            call[2] += piece.function.arguments or ""


def _asked(conversation: list[Message]) -> list[str]:
    """What the reply was asked with, to tell an echo of it: the model's own earlier replies
    are not (sent back after a correction, an invalid plan is that plan, not an echo)."""
    return [str(m.get("content", "")) for m in conversation if m.get("role") != "assistant"]
