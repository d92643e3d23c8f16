"""What every part of a session shares: the model, the shadow worktree, the sandbox, the event
sink and the human's feedback inbox. `call_model` is the one door to the model."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tui_engineer.base.errors import UserError
from tui_engineer.context.packing import MAX_TOTAL_CHARS
from tui_engineer.context.repomap import RepoMap
from tui_engineer.engine import events as ev
from tui_engineer.engine.ahead.test_queue import TestQueue
from tui_engineer.engine.editor_buffers import BufferReader
from tui_engineer.engine.inbox import Inbox
from tui_engineer.engine.options import EngineOptions
from tui_engineer.engine.prompts import Message, feedback_message, review_notes_message
from tui_engineer.engine.steps import reach
from tui_engineer.engine.steps.test_writes import bracketed
from tui_engineer.engine.tool_use import SessionTools, shown_tools
from tui_engineer.engine.usage import (
    LiveReply,
    budget_warnings,
    estimate,
    exchange_event,
    usage_event,
)
from tui_engineer.llm.errors import ServerUnreachable
from tui_engineer.llm.reply_watch import Expected, OffTrackReply
from tui_engineer.verify.report import tail_lines

if TYPE_CHECKING:
    from tui_engineer.llm import Completion, UsageLedger
    from tui_engineer.sandbox import Sandbox
    from tui_engineer.vcs.shadow import Shadow
    from tui_engineer.verify import TestReport
    from tui_engineer.verify.baseline import Baseline
    from tui_engineer.verify.selection import TestSelection
    from tui_engineer.verify.targets import StepAim


class Model(Protocol):
    """A model client: the real ModelClient, or a replay of a recorded run."""

    model: str
    ledger: UsageLedger

    async def complete(
        self, messages: list[Message], *, on_text: object = None, **kwargs: object
    ) -> Completion: ...


OnUnreachable = Callable[
    ["Runtime", ServerUnreachable, tuple[str, int | None], "Stuck"], Awaitable[None]
]


@dataclass
class Stuck:
    """One call's pauses on a model server gone: how many so far, and since when (monotonic
    time of the first): a probe that answers does not reset the pause's bound."""

    times: int = 0
    since: float = 0.0


FAILED_TAIL_LINES = 12  # lines of a failing run's output its TestsFinished event carries


@dataclass
class Runtime:
    root: Path
    shadow: Shadow
    model: Model
    sandbox: Sandbox
    options: EngineOptions
    emit: ev.EventSink
    inbox: asyncio.Queue[str] = field(default_factory=Inbox)  # engine/inbox.py
    selection: TestSelection | None = None  # affected tests first (engine/steps/verification.py)
    delivered: int = 0  # chat messages taken so far (a step prepared before one is stale)
    # Called when a call finds the model server gone: returns when the call is to be made
    # again, raises to give up (the session's own runtime: engine/server_wait.py). None: fail.
    on_unreachable: OnUnreachable | None = None
    # The repository map's first build, beside the baseline (engine/steps/repo_context.py).
    map_task: asyncio.Task[RepoMap] | None = None
    # What reads the rest of a map cut short, in the background (context/fill.py).
    map_filler: asyncio.subprocess.Process | None = None
    # The suite on the starting commit (engine/steps/baseline.py): its run, and its outcome once
    # known.
    baseline_task: asyncio.Task[Baseline] | None = None
    baseline: Baseline | None = None
    # Set once the baseline's run shows a test's result (verify/started.py): the suite starts.
    baseline_started: asyncio.Event = field(default_factory=asyncio.Event)
    # Per step: what it is about (verify/targets.py). The tests red at the start that it
    # names, points at or lists under `fixes` are its to make pass.
    aims: dict[int, StepAim] = field(default_factory=dict)
    # Per step: {test id: the model's reason} for the old failures its change runs through
    # that the model said are not the step's (edits/disown.py, engine/steps/reach.py).
    disowned: dict[int, dict[str, str]] = field(default_factory=dict)
    # What the human's reviews decided that the model should know (hunks dropped, hand edits,
    # line comments: engine/reviews/review_notes.py), delivered with its next call.
    review_notes: list[str] = field(default_factory=list)
    # The session's MCP servers' tools (tui_engineer/mcp_tools/), offered on the calls that
    # plan, edit and diagnose (engine/tool_use.py); None: no server.
    tools: SessionTools | None = None
    # An editor's unsaved buffers (ACP's fs/read_text_file): a file's text as the editor holds
    # it, shown to the model instead of the saved file (engine/editor_buffers.py).
    read_buffer: BufferReader | None = None
    # Every test run of the session and of the steps prepared beside it takes its turn here
    # (engine/ahead/test_queue.py); a prepared step's runtime shares it.
    test_queue: TestQueue = field(default_factory=TestQueue)
    _warned: set[str] = field(default_factory=set)

    @property
    def context_chars(self) -> int:
        """Characters of file contents a prompt may hold (context_budget tokens × 4)."""
        budget = self.options.context_budget
        return MAX_TOTAL_CHARS if budget is None else budget * 4

    @property
    def workdir(self) -> Path:
        return self.shadow.path

    def take_feedback(self) -> list[str]:
        texts: list[str] = []
        while not self.inbox.empty():
            texts.append(self.inbox.get_nowait())
        self.delivered += len(texts)
        return texts

    async def call_model(
        self,
        messages: list[Message],
        purpose: str,
        step: int | None = None,
        *,
        deliver_feedback: bool = True,
        expect: Expected | None = None,
    ) -> str:
        """One model call. Pending human feedback is appended to `messages` first, so it stays
        in this conversation's context for later calls too. Side calls (diagnosis) leave it for
        the conversation that acts on it. `expect`: how a right reply begins; one that plainly
        is not it is stopped early (OffTrackReply, llm/reply_watch.py)."""
        feedback = self.take_feedback() if deliver_feedback else []
        if deliver_feedback and self.review_notes:
            notes, self.review_notes[:] = list(self.review_notes), []
            messages.append(review_notes_message(notes))
            self.emit(ev.ReviewNotesDelivered(count=len(notes), purpose=purpose, step=step))
        if feedback:
            messages.append(feedback_message(feedback))
            for text in feedback:
                self.emit(ev.FeedbackDelivered(text=text, purpose=purpose, step=step))
        cap = self.options.reply_limit(purpose)
        prompt = estimate(sum(len(str(m.get("content", ""))) for m in messages))
        stuck = Stuck()
        while True:
            live = LiveReply(lambda tokens: self.emit_usage(tokens, live=True), prompt)
            self.emit(
                ev.ModelCallStarted(
                    purpose=purpose, step=step, prompt_tokens=prompt, max_output_tokens=cap
                )
            )
            try:
                completion = await self._complete(messages, (purpose, step), cap, live, expect)
                break
            except ServerUnreachable as err:
                self._report_failure(purpose, step, prompt, live.text, err)
                if self.on_unreachable is None:
                    raise
                stuck.times += 1
                stuck.since = stuck.since or time.monotonic()
                # Returns when the call is to be made again (engine/server_wait.py).
                await self.on_unreachable(self, err, (purpose, step), stuck)
            except (UserError, OSError) as err:
                self._report_failure(purpose, step, prompt, live.text, err)
                raise
        self._report_usage(messages, completion, purpose, step)
        return completion.text

    async def _complete(
        self,
        messages: list[Message],
        called: tuple[str, int | None],
        cap: int,
        live: LiveReply,
        expect: Expected | None,
    ) -> Completion:
        purpose, step = called

        def on_text(chunk: str) -> None:
            self.emit(ev.TokenStream(purpose=purpose, text=chunk))
            live.add(chunk)

        def on_retry(reason: str) -> None:
            live.reset()
            self.emit(ev.ModelRetried(purpose=purpose, reason=reason))

        shape: dict[str, object] = {"expect": expect} if expect is not None else {}
        if (box := shown_tools(self.tools, self.emit, purpose, step)) is not None:
            shape["tools"] = box
        return await self.model.complete(
            messages, on_text=on_text, on_retry=on_retry, max_output_tokens=cap, **shape
        )

    def _report_failure(
        self, purpose: str, step: int | None, prompt: int, partial: str, err: Exception
    ) -> None:
        """Leave a trace of a failed call in the record, and the ledger's totals in the UI."""
        stopped = isinstance(err, OffTrackReply)  # its own count, the one its message gives
        self.emit(
            ev.ModelCallFailed(
                purpose=purpose,
                step=step,
                prompt_tokens=prompt,
                partial_reply=partial,
                completion_tokens=err.tokens if stopped else estimate(len(partial)),
                error=str(err),
                stopped=stopped,
                stop_reason=err.reason if isinstance(err, OffTrackReply) else "",
            )
        )
        self.emit_usage()

    def emit_usage(self, in_flight: tuple[int, int] = (0, 0), *, live: bool = False) -> None:
        """The session's usage so far, plus the tokens of a call still streaming."""
        self.emit(usage_event(self.model.ledger, self.options, in_flight, live))

    def _report_usage(
        self, messages: Sequence[Message], completion: Completion, purpose: str, step: int | None
    ) -> None:
        self.emit(exchange_event(messages, completion, purpose, step))
        for warning in budget_warnings(self.model.ledger, self.options, self._warned):
            self.emit(warning)
        self.emit_usage()

    def test_rank(self) -> int:
        """Where its test runs stand in the session's queue (engine/ahead/test_queue.py): the step
        worked on goes first; a step prepared ahead says otherwise."""
        return 0

    def known_baseline(self) -> Baseline | None:
        """The baseline once it is known (also in a copy of this runtime made before: a step
        prepared ahead shares the task)."""
        task = self.baseline_task
        if self.baseline is None and task is not None and task.done() and not task.cancelled():
            if task.exception() is None:
                self.baseline = task.result()
        return self.baseline

    async def prewarm_tests(self) -> None:
        """Start the next test run now, paused before it reads the project (a sandbox that can:
        the local one, for a plain `python -m pytest`), so its start-up overlaps the model's
        call. Only when that run is the full test command: a narrowed one is chosen from the
        edit. An unused one ends with the next other run or the sandbox."""
        prewarm = getattr(self.sandbox, "prewarm", None)
        if prewarm is None or self.options.unverified or not self.options.test_command:
            return
        if self.selection is not None and self.selection.worth_narrowing():
            return
        await prewarm(self.workdir, self.options.test_command)

    async def run_tests(
        self, step: int | None, *, command: str | None = None, scope: str = "full"
    ) -> TestReport:
        """Run the test command (or `command`, a narrowed form of it: `scope` says which)."""
        shown = self.options.test_command
        command = command or shown
        async with self.test_queue.turn(rank=self.test_rank()):
            self.emit(ev.TestsStarted(step=step, command=shown, scope=scope))
            # What the run writes is not the step's.
            async with bracketed(self.shadow, self.sandbox):
                report = await self.sandbox.run_tests(
                    self.workdir,
                    command,
                    timeout=self.options.test_timeout,
                    on_output=lambda line: self.emit(ev.TestOutput(line=line)),
                )
        baseline = self.known_baseline()
        if baseline is not None and scope != "before":
            aim = self.aims.get(step or 0)
            targets = aim.targets(baseline.failing) if aim is not None else frozenset()
            report = baseline.judge(report, targets)
            if step is not None:
                await self.judge_reach(step, report, baseline.failing)
        self.emit(
            ev.TestsFinished(
                step=step,
                ok=report.ok,
                summary=report.summary(),
                passed=report.passed,
                failed=report.failed,
                errors=report.errors,
                skipped=report.skipped,
                duration=report.duration,
                failing=tuple(f.test_id for f in report.failures),
                failures=tuple((f.test_id, f.traceback or f.message) for f in report.failures),
                scope=scope,
                output_tail="" if report.ok else tail_lines(report.output_tail, FAILED_TAIL_LINES),
                old_failing=tuple(f.test_id for f in report.old),
                fixed=tuple(report.fixed),
                reached=tuple(report.reached),
            )
        )
        return report

    async def judge_reach(self, step: int, report: TestReport, failing: Sequence[str]) -> None:
        """The old failures the step's change runs through are its own, unless the model
        disowned them (engine/steps/reach.py). Files are read in a thread, off the loop."""
        disowned = self.disowned.get(step, {})
        if not report.old and not disowned:
            return
        tell = "reach unknown" not in self._warned
        self._warned.add("reach unknown")

        def judged() -> list[str]:
            diff = self.shadow.diff()
            reach.judge(report, failing, self.workdir, diff, disowned)
            return reach.unknown(self.workdir, failing) if tell else []

        unread = await asyncio.to_thread(judged)
        if unread:
            self.emit(ev.Notice(message=reach.unknown_notice(unread)))
