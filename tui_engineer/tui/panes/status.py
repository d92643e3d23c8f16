"""The status bar: phase, approval mode, model, sandbox, tokens and cost against the budget,
elapsed time, and a busy spinner. Its keys (bound on the session's screen): `m` switches the
approval mode it shows, `r` retries now while it says the model server is gone."""

from __future__ import annotations

import time
from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.reactive import reactive
from textual.widgets import Static

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.approval import other
from tui_engineer.engine.reviews.review import tests_result
from tui_engineer.engine.waits import call_wait
from tui_engineer.llm.usage import format_cost
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.engine_messages import EngineMessage, heard

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
BASELINE_BUSY = "tests running: the starting commit"


def _tokens(used: int, cap: int | None, estimated: bool = False) -> str:
    # "~": counted by estimate (no usage from the server, or a reply still streaming)
    return ("~" if estimated else "") + f"{used:,} tok" + (f" / {cap:,}" if cap else "")


def _money(usd: float | None, cap: float | None) -> str:
    spent = format_cost(usd)
    return spent + (f" / ${cap:.2f}" if cap else "")


class StatusBar(Static):
    """One line. `deterministic` hides the clock and which bwrap, and freezes the spinner
    (snapshots)."""

    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """
    model: reactive[str] = reactive("")
    sandbox: reactive[str] = reactive("")  # where tests run: "local" or "docker"
    bwrap: reactive[str] = reactive("")  # the local sandbox's bubblewrap: "system" or "bundled"
    phase: reactive[str] = reactive("starting")
    busy: reactive[str] = reactive("")  # what is under way ("" = idle)
    # What a model call under way waits for ("step 2 · waiting for the model: propose"), shown
    # in place of `busy`'s short name (engine/waits.py); cleared with it.
    detail: reactive[str] = reactive("")
    tokens: reactive[int] = reactive(0)
    estimated: reactive[bool] = reactive(False)
    max_tokens: reactive[int | None] = reactive(None)
    usd: reactive[float | None] = reactive(None)  # None: unknown (no model yet, or no price)
    max_usd: reactive[float | None] = reactive(None)
    approval: reactive[str] = reactive("")  # "ask" or "auto" ("" until the settings are read)

    def __init__(self, *, deterministic: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.deterministic = deterministic
        self.started: float | None = None
        self.busy_since: float | None = None  # when what is under way began (a model call)
        self._frame = 0
        self._call: tuple[int | None, str] | None = None  # the model call under way
        self._just_committed = ""  # "committed <sha> · " until the next step starts
        self._baseline_running = False  # the suite on the starting commit

    def switch_approval(self, controller: SessionController) -> None:
        """`m`: ask ⇄ auto. From the next proposal on: one under review now stays yours."""
        mode = other(self.approval or "ask")
        self.approval = mode
        if controller.session is not None:
            controller.session.approval = mode
        meaning = {
            "auto": "a step whose tests pass is committed without asking",
            "ask": "you review every step",
        }
        self.notify(f"Approval: {mode} — {meaning[mode]}.", timeout=4)

    def retry(self, controller: SessionController) -> None:
        """`r` while paused on a model server that went away: make the call again now."""
        if controller.session is not None and controller.server_paused:
            controller.session.retry_now()
            self.phase = "retrying the model call"

    def on_mount(self) -> None:
        if not self.deterministic:
            self.set_interval(0.1, self._tick)

    def _tick(self) -> None:
        self._frame += 1
        if self.busy or self.started is not None:
            self.refresh()

    def watch_busy(self, old: str, new: str) -> None:
        """The wait is counted from when work began, through its changes of wording (waiting
        for the model, then its reply streaming), until idle."""
        if not new:
            self.busy_since = None
            self.detail = ""
        elif not old or self.busy_since is None:
            self.busy_since = time.monotonic()

    def call_started(self, detail: str) -> None:
        """A model call began: its own seconds count from now (whatever ran before it, the
        suite on the starting commit say), beside what it waits for."""
        self.busy_since = time.monotonic()
        self.detail = detail

    def busy_text(self) -> str:
        """'step 2 · waiting for the model · 14 s': what is under way and for how long (from
        2 s on; never in snapshots)."""
        what = self.detail or self.busy
        if self.busy_since is None or self.deterministic:
            return what
        seconds = int(time.monotonic() - self.busy_since)
        return f"{what} · {seconds} s" if seconds >= 2 else what

    def start_clock(self) -> None:
        self.started = time.monotonic()

    def stop_clock(self) -> None:
        self.started = None

    def render(self) -> Text:
        head = Text()
        if self.busy:
            spin = "●" if self.deterministic else SPINNER[self._frame % len(SPINNER)]
            head.append(f"{spin} {self.busy_text()}  ", style="bold")
        head.append(self.phase)
        facts = self._facts()
        width = self.content_size.width or 10_000
        # Narrow terminal: the sandbox, then the model name give way, then what is under way
        # is shortened ("…"); tokens, money and the clock always show whole.
        for optional in ("sandbox", "model"):
            if len(head) + len(_joined(facts.values())) <= width:
                break
            facts.pop(optional, None)
        tail = _joined(facts.values())
        head.truncate(max(width - len(tail), 1), overflow="ellipsis")
        head.append(tail, style="dim")
        return head

    def _facts(self) -> dict[str, str]:
        facts: dict[str, str] = {}
        if self.approval:  # always shown: whether steps are committed without asking
            facts["approval"] = f"mode: {self.approval}"
        facts["model"] = self.model or "no model"
        if self.sandbox:
            # Which bwrap depends on the machine: snapshots (deterministic) leave it out.
            which = f" ({self.bwrap} bwrap)" if self.bwrap and not self.deterministic else ""
            facts["sandbox"] = f"sandbox: {self.sandbox}{which}"
        facts["tokens"] = _tokens(self.tokens, self.max_tokens, self.estimated)
        facts["money"] = _money(self.usd, self.max_usd)
        if self.started is not None and not self.deterministic:
            seconds = int(time.monotonic() - self.started)
            facts["clock"] = f"{seconds // 60:02d}:{seconds % 60:02d}"
        return facts

    # ----- the engine's events, as the status line says them (tui/engine_messages.py)

    def idle(self) -> str:
        """What is under way when the foreground's work ends: the suite on the starting
        commit may still run (a slow suite outlasts the plan call)."""
        return BASELINE_BUSY if self._baseline_running else ""

    @on(heard(ev.SessionStarted))
    def _session_started(self, message: EngineMessage[ev.SessionStarted]) -> None:
        event = message.event
        self.model = event.model
        self.sandbox = event.sandbox
        self.bwrap = event.bwrap

    @on(heard(ev.StepStarted))
    def _step_started(self, message: EngineMessage[ev.StepStarted]) -> None:
        # The commit just made stays in sight while the next step gets ready.
        committed, self._just_committed = self._just_committed, ""
        self.phase = f"{committed}step {message.event.index}: {message.event.title}"

    @on(heard(ev.ModelCallStarted))
    def _model_call_started(self, message: EngineMessage[ev.ModelCallStarted]) -> None:
        event = message.event
        self.busy = f"model: {event.purpose}"
        self._call = (event.step, event.purpose)
        self.call_started(call_wait(event.step, event.purpose))

    @on(heard(ev.TokenStream))
    def _token(self, message: EngineMessage[ev.TokenStream]) -> None:
        call = self._call
        if call is not None and self.detail == call_wait(*call):  # its first token
            self.detail = call_wait(*call, streaming=True)

    @on(heard(ev.ModelExchange))
    def _model_exchange(self, message: EngineMessage[ev.ModelExchange]) -> None:
        if not message.event.background:  # the step prepared ahead: not the spinner on screen
            self.busy = self.idle()

    @on(heard(ev.ModelCallFailed))
    def _model_call_failed(self, message: EngineMessage[ev.ModelCallFailed]) -> None:
        self.busy = self.idle()

    @on(heard(ev.ServerPaused))
    def _server_paused(self, message: EngineMessage[ev.ServerPaused]) -> None:
        self.busy = ""
        self.phase = "paused: the model server does not answer (r retries)"

    @on(heard(ev.ServerResumed))
    def _server_resumed(self, message: EngineMessage[ev.ServerResumed]) -> None:
        self.phase = f"retrying the {message.event.purpose} call"

    @on(heard(ev.UsageUpdated))
    def _usage(self, message: EngineMessage[ev.UsageUpdated]) -> None:
        event = message.event
        self.estimated = event.estimated
        self.tokens = event.prompt_tokens + event.completion_tokens
        self.usd = event.usd
        self.max_tokens, self.max_usd = event.max_tokens, event.max_usd

    @on(heard(ev.AttemptStarted))
    def _attempt_started(self, message: EngineMessage[ev.AttemptStarted]) -> None:
        event = message.event
        if event.attempt > 0:
            self.phase = f"step {event.step}: fixing ({event.attempt}/{event.max_attempts})"

    @on(heard(ev.ProposalReady))
    def _proposal_ready(self, message: EngineMessage[ev.ProposalReady]) -> None:
        event = message.event
        tests = tests_result(event.tests_ok, event.summary, event.disowned)
        self.phase = f"review step {event.step} ({tests})"  # the keys are in the footer

    @on(heard(ev.DecisionMade))
    def _decision(self, message: EngineMessage[ev.DecisionMade]) -> None:
        if message.event.decision == "accept":  # on disk: a kill from here on still commits it
            self.phase = "accepted: committing"

    @on(heard(ev.StepCommitted))
    def _step_committed(self, message: EngineMessage[ev.StepCommitted]) -> None:
        sha = message.event.sha[:7]
        self.phase = "committed" + ("" if self.deterministic else f" {sha}")
        self._just_committed = f"{self.phase} · "

    @on(heard(ev.AcceptRefused))
    def _accept_refused(self, message: EngineMessage[ev.AcceptRefused]) -> None:
        self.phase = f"review step {message.event.step} (not committed: git refused it)"

    @on(heard(ev.ErrorEvent))
    def _error(self, message: EngineMessage[ev.ErrorEvent]) -> None:
        # Nothing is under way any more: no spinner.
        self.busy = ""
        self.phase = "stopped"

    @on(heard(ev.TestsStarted))
    def _tests_started(self, message: EngineMessage[ev.TestsStarted]) -> None:
        self.busy = "tests running"

    @on(heard(ev.TestsFinished))
    def _tests_finished(self, message: EngineMessage[ev.TestsFinished]) -> None:
        self.busy = self.idle()

    @on(heard(ev.BaselineStarted))
    def _baseline_started(self, message: EngineMessage[ev.BaselineStarted]) -> None:
        self._baseline_running = True
        if not self.busy:
            self.busy = BASELINE_BUSY

    @on(heard(ev.BaselineReady))
    @on(heard(ev.BaselineFailed))
    def _baseline_done(self, message: EngineMessage[ev.Event]) -> None:
        self._baseline_running = False
        if self.busy == BASELINE_BUSY:
            self.busy = ""


def _joined(facts: Iterable[str]) -> str:
    return "".join(f" │ {fact}" for fact in facts)
