"""The model client: chat completions from any OpenAI-compatible server through the `openai` SDK.

What it adds on top of the SDK, and where each part lives:
- streaming with text deltas handed to `on_text`, and a non-streaming fallback (remembered for
  the session) for servers that refuse `stream=true` or `stream_options`; a stream dropped
  mid-way, a malformed chunk, an error event inside the stream or an empty reply retried from
  scratch a bounded number of times (`on_reset` tells the consumer why and to drop what it
  showed); budgets enforced during a stream (BudgetExceeded, the partial reply counted):
  llm/streaming.py. 429/5xx/connection errors are retried by the SDK itself (`max_retries`);
- an idle timeout (no text for `idle_timeout` seconds, whatever bytes arrive: keep-alives and
  empty chunks are no sign of life): a slow but live stream runs on, a hung server is given up
  on; each call has a total bound too (`call_timeout`): llm/streaming.py;
- usage per call into a `UsageLedger` (estimated as chars / 4 when the server reports none) and
  budgets checked before every call, continuations included: llm/accounting.py;
- the context window: a call whose prompt cannot fit is not made, the reply cap is lowered to
  what fits, and a reply cut off at the window is not continued (the error names the window):
  llm/window.py;
- the reply cap enforced by the client as well: a server that streams more pieces than the cap
  allows ignored `max_completion_tokens` (llama-cpp-python, older llama-server and llamafile
  read only `max_tokens`): the reply is cut there like a "length" finish, and later calls send
  the cap as `max_tokens`: llm/reply_cap.py;
- replies cut off by the token limit are continued (`max_continuations`) or refused, never
  used half: here;
- SDK exceptions become `LLMError`s with actionable messages that never contain the API key
  (llm/error_mapping.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import openai

from tui_engineer.base.names import readable
from tui_engineer.llm.accounting import CallAccounts, Message
from tui_engineer.llm.discovery import WindowDiscovery, WindowReport
from tui_engineer.llm.error_mapping import ErrorMapper
from tui_engineer.llm.errors import LLMError, MissingApiKey, ModelReplyError, UnknownModel
from tui_engineer.llm.models import model_is_served
from tui_engineer.llm.reply_watch import Expected
from tui_engineer.llm.streaming import (
    DEFAULT_CALL_TIMEOUT,
    ChatCalls,
    Reply,
    ResetCallback,
    RetryCallback,
    TextCallback,
)
from tui_engineer.llm.tokens import PromptCounter
from tui_engineer.llm.tools import ToolBox, ToolRounds
from tui_engineer.llm.usage import Budget, CallUsage, UsageLedger, price_for
from tui_engineer.llm.window import (
    DEFAULT_CONTEXT_WINDOW,
    fit_reply_cap,
    refuse_continuation,
    refuse_cut_at_window,
    server_cut_short,
)

DEFAULT_IDLE_TIMEOUT = 60.0  # seconds without a byte from the server before giving up on a call
CONNECT_TIMEOUT = 10.0
PROBE_TIMEOUT = 5.0  # seconds: is the server back? (answers)
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
    tool_rounds: int = 0  # replies that called tools before this one


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
        call_timeout: float | None = DEFAULT_CALL_TIMEOUT,
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
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_continuations = max_continuations
        self.context_window = context_window  # tokens; None until learned from the server
        # Where the window came from, for the user (None until asked; llm/discovery.py).
        self.window_report: WindowReport | None = None
        if context_window is not None:
            self.window_report = WindowReport(
                context_window, "context_window in the config", origin="config"
            )
        self._window_assumed = False  # True when neither the config nor the server said
        # The server being asked its window: one asking shared by every caller meanwhile.
        self._learning: asyncio.Future[None] | None = None
        self._model_list: object = None  # the server's /models as the start check read it
        self._key = api_key
        self._sdk = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url or None,
            max_retries=max_retries,
            # `read` is per read: an idle timeout. A live stream may run as long as it sends.
            timeout=openai.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
        )
        self.base_url = str(self._sdk.base_url).rstrip("/")
        self._accounts = CallAccounts(
            model,
            ledger if ledger is not None else UsageLedger(),
            budget if budget is not None else Budget(),
            PromptCounter(self._sdk, self.base_url, model),
        )
        self._calls = ChatCalls(
            self._sdk,
            model=model,
            base_url=self.base_url,
            accounts=self._accounts,
            errors=lambda: self._errors,
        )
        self._calls.call_limit = call_timeout

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
            call_timeout=getattr(settings, "call_timeout", DEFAULT_CALL_TIMEOUT),
        )

    @property
    def ledger(self) -> UsageLedger:
        return self._accounts.ledger

    @property
    def budget(self) -> Budget:
        return self._accounts.budget

    @property
    def retries(self) -> int:
        """Broken replies retried in this session."""
        return self._calls.retries

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
        expect: Expected | None = None,
        tools: ToolBox | None = None,
    ) -> Completion:
        """Ask the model; return the whole reply text.

        `on_text` receives text as it arrives (the whole text once when not streaming).
        Continuations after a "length" cut keep feeding `on_text`, so a consumer sees one
        continuous text. If a stream drops mid-way it is retried from scratch: `on_reset` is
        called first, and the consumer should discard what `on_text` gave it; `on_retry` gets
        why ("dropped", "malformed", "error event", "empty").
        `max_output_tokens` is sent as `max_completion_tokens` (lowered to fit the window), or
        as `max_tokens` once this server was seen ignoring the former; a stream is cut there.
        `expect`: how a right reply begins; a streamed one with no sign of it within its
        tokens is stopped there (OffTrackReply, llm/reply_watch.py).
        `tools`: what the model may call first (llm/tools.py): each round's results go back
        to it, at most `tools.max_rounds` rounds; every round is a call, counted in the budget.
        Raises BudgetExceeded before any call that would overspend, LLMError subclasses otherwise.
        """
        # A name or test output with a byte that is not UTF-8 reaches the model as U+FFFD: a
        # lone surrogate cannot be encoded into the request at all.
        conversation = [{**m, "content": readable(m["content"])} for m in messages]
        await self.learn_context_window()
        parts: list[str] = []
        calls: list[CallUsage] = []
        retries_before = self.retries
        known_window = None if self._window_assumed else self.context_window
        rounds = ToolRounds(tools if self._calls.tools_ok else None)
        if tools is not None:
            self._calls.on_tools_refused = tools.refused
        continued = 0
        while continued <= self.max_continuations:
            await self._accounts.tokens.measure(conversation)
            prompt = self._accounts.prompt_tokens(conversation)
            cap = fit_reply_cap(self.context_window, prompt, max_output_tokens)
            reply = await self._calls.call(
                conversation,
                on_text,
                (on_reset, on_retry),
                stream,
                cap,
                known_window,
                expected=None if continued else expect,
                tools=rounds.offer() if not continued and self._calls.tools_ok else None,
            )
            calls.append(reply.usage)
            if reply.tool_calls and rounds.more() and not continued:
                # The model asked for its tools: their results go back before its answer.
                conversation += await rounds.answer(reply.text, reply.tool_calls)
                continue
            parts.append(reply.text)
            if reply.finish_reason != "length":
                done = self._finished(parts, calls, reply, continued)
                done.retries = self.retries - retries_before
                done.tool_rounds = rounds.rounds
                return done
            if self._window_assumed and server_cut_short(reply.usage, cap):
                self._learn_window_from_cut(reply.usage)
            refuse_cut_at_window(
                self.model, self.context_window, reply.usage, cap, max_output_tokens
            )
            conversation += [
                {"role": "assistant", "content": reply.text},
                {"role": "user", "content": CONTINUE_PROMPT},
            ]
            if continued < self.max_continuations:
                await self._accounts.tokens.measure(conversation)
                refuse_continuation(
                    self.model,
                    self.context_window,
                    self._accounts.prompt_tokens(conversation),
                    cap,
                )
            continued += 1
        raise ModelReplyError(
            f"The reply from {self.model} was cut off by the token limit even after "
            f"{self.max_continuations} continuation(s), so it was not used. Ask for a smaller "
            "change, or allow longer replies."
        )

    async def answers(self) -> bool:
        """Whether anything answers at the base URL now (any HTTP reply to GET /models, even an
        error): one quick try, no retries. For a session paused on a server that went away."""
        quick = self._sdk.with_options(max_retries=0, timeout=min(self.timeout, PROBE_TIMEOUT))
        try:
            await quick.models.list()
        except openai.APIConnectionError:  # refused, reset, timed out (a subclass)
            return False
        except openai.OpenAIError:
            return True
        return True

    async def check_connection(self) -> None:
        """Make sure the server answers, accepts the key and serves the model (GET /models)."""
        try:
            raw = await self._sdk.models.with_raw_response.list()
        except openai.OpenAIError as err:
            raise self._errors.sdk_error(err) from None
        self._errors.refuse_web_page(raw.headers)
        page = raw.parse()
        with contextlib.suppress(ValueError):  # the window's asking reads it again
            self._model_list = raw.http_response.json()
        self._calls.answered = True  # the base URL is the API: a later HTML page is a proxy's
        names = [m.id for m in page.data]
        if not model_is_served(self.model, names):
            shown = ", ".join(sorted(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise UnknownModel(self._errors.unknown_model_text(f"It serves: {shown}."))

    async def reported_window(self) -> WindowReport | None:
        """The context window the server tells, with where it says it; None when it says
        nothing (doctor)."""
        discovery = WindowDiscovery(self._sdk, self.base_url, self.model)
        listing, self._model_list = self._model_list, None
        return await discovery.discover(listing)

    async def learn_context_window(self) -> int:
        """The context window: from the config, else what the server tells (llm/discovery.py:
        llama.cpp, vLLM, LM Studio, Ollama, llama-cpp-python), else DEFAULT_CONTEXT_WINDOW,
        assumed. Asked once, whoever asks meanwhile (the session's start notice beside its
        first prompt); `window_report` says where it came from."""
        if self.window_report is None:
            learning = self._learning
            if learning is None or learning.get_loop() is not asyncio.get_running_loop():
                learning = self._learning = asyncio.ensure_future(self._learn_window())
            try:  # a caller cancelled does not cancel the asking the others wait for
                await asyncio.shield(learning)
            finally:
                if learning.done() and self.window_report is None:
                    self._learning = None  # it failed: the next caller asks again
        return self.context_window or DEFAULT_CONTEXT_WINDOW

    async def _learn_window(self) -> None:
        if self.window_report is None:
            learned = await self.reported_window()
            self._window_assumed = learned is None
            self.window_report = learned or WindowReport(
                DEFAULT_CONTEXT_WINDOW,
                "assumed: the server does not tell it",
                f"The server at {self.base_url} does not tell the model's context window: "
                f"{DEFAULT_CONTEXT_WINDOW:,} tokens are assumed. Set context_window to the "
                "model's real window.",
                origin="assumed",
            )
            self.context_window = self.window_report.tokens

    def _learn_window_from_cut(self, usage: CallUsage) -> None:
        """With the window unknown, the server ended a reply short of its cap: its window is
        most likely full at prompt + reply (llama-cpp-python lowers the cap to what its window
        leaves, telling nothing). Not continued into it; later calls fit it."""
        self.context_window = usage.prompt_tokens + usage.completion_tokens
        self._window_assumed = False
        self.window_report = WindowReport(
            self.context_window, "where the server cut a reply short of its cap"
        )

    async def aclose(self) -> None:
        if self._learning is not None and not self._learning.done():
            self._learning.cancel()  # no one waits for it any more
        await self._sdk.close()

    # ----- results

    def _finished(
        self, parts: list[str], calls: list[CallUsage], last: Reply, continued: int
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
