"""Render engine events on a terminal: readable progress lines, or one JSON object per line."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import re
import sys
import time
from typing import TextIO

from tui_engineer.base.names import readable
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.chat_target import restarted_line
from tui_engineer.engine.reviews.review import (
    BY_YOU,
    WRITTEN_BY_TESTS,
    old_failure_lines,
    written_line,
)
from tui_engineer.engine.tool_use import tool_line
from tui_engineer.engine.waits import call_wait
from tui_engineer.llm.usage import format_cost


class JsonPrinter:
    def __init__(self, out: TextIO | None = None) -> None:
        self._out = out or sys.stdout  # looked up now: a test may have replaced it

    def __call__(self, event: ev.Event) -> None:
        # A file name that is not UTF-8 is shown with U+FFFD: the line stays UTF-8 (the run
        # record keeps the exact name).
        self._out.write(readable(json.dumps(event.to_dict(), ensure_ascii=False)) + "\n")
        self._out.flush()


class NotingCommits:
    """A printer that notes the commits made, so a stopped run's last line says what the branch
    holds (an accept is committed to its end before a stop reports: engine/reviews/decisions.py)."""

    def __init__(self, printer: ev.EventSink) -> None:
        self.printer = printer
        self.commits: list[tuple[str, str]] = []

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.StepCommitted):
            self.commits.append((event.sha, event.title))
        self.printer(event)

    def left(self) -> str:
        """What a stopped run left: its commits, if any, and the user's other files."""
        removed = "the shadow worktree was removed"
        if not self.commits:
            return f"{removed}, your files are untouched"
        made = ", ".join(f"{sha[:8]} {visible(title)}" for sha, title in self.commits)
        return f"committed on your branch: {made}; {removed}, your other files are untouched"


# Control characters (ESC starts the sequences that retitle or clear a terminal; C1 too), except
# tab and newline: text the model chose (file names, reasons) is printed with them made visible.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character shown as `\\xNN`, so it cannot drive the terminal,
    and every byte that is not UTF-8 (in a file name, in test output) as U+FFFD."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", readable(text))


MAP_SAID_AFTER = 1.0  # seconds: a quicker repository map is not worth a line
# How each kind of test run is named in the progress lines (engine/steps/verification.py).
TEST_SCOPES = {"full": "tests", "affected": "affected tests", "failing": "failing tests again"}


class ProgressPrinter:
    """Human progress. On a terminal, a live status line shows what is under way."""

    def __init__(self, out: TextIO | None = None, *, log_every: float = 30.0) -> None:
        self._out = out = out or sys.stdout  # looked up now: a test may have replaced it
        self._live = out.isatty()
        self._log_every = log_every  # without a terminal: a "still waiting" line this often
        self._status = ""
        self._chars = 0
        self._tokens = 0
        self._waiting: asyncio.Task[None] | None = None
        self._usage: ev.UsageUpdated | None = None
        self._narrowed_before = False

    def _write(self, text: str) -> None:
        try:
            self._out.write(text)
            self._out.flush()
        except OSError as err:
            if err.errno != errno.EIO:
                raise
            # The terminal hung up (its window closed): the SIGHUP that stops the run is on its
            # way (session/signals.py); until then there is nothing to show anything on.
            self._out = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (lives on)

    def _line(self, text: str) -> None:
        self._clear_status()
        self._write(visible(text) + "\n")

    def _set_status(self, text: str) -> None:
        if self._live:
            self._clear_status()
            self._status = text = visible(text)
            self._write(text)

    def _clear_status(self) -> None:
        if self._live and self._status:
            self._write("\r" + " " * len(self._status) + "\r")
            self._status = ""

    def __call__(self, event: ev.Event) -> None:
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event)

    def _on_session_started(self, e: ev.SessionStarted) -> None:
        tests = e.test_command or "none (unverified: no tests run)"
        which = f" ({e.bwrap} bwrap)" if e.bwrap else ""
        self._line(
            f"tui-engineer {e.session_id} · model {e.model} · tests: {tests}"
            f" · sandbox: {e.sandbox}{which}"
        )

    def _on_session_resumed(self, e: ev.SessionResumed) -> None:
        self._line(e.message)

    def _on_notice(self, e: ev.Notice) -> None:
        self._line(f"note: {e.message}")

    def _on_plan_ready(self, e: ev.PlanReady) -> None:
        self._line(f"Plan ({len(e.steps)} step{'s' if len(e.steps) != 1 else ''}):")
        for step in e.steps:
            self._line(f"  {step.index}. {step.listed}{_waits_for(step, e.steps)}")

    def _on_step_started(self, e: ev.StepStarted) -> None:
        self._line(f"▶ Step {e.index}: {e.title}")

    def _on_model_call_started(self, e: ev.ModelCallStarted) -> None:
        self._chars = self._tokens = 0
        self._stop_waiting()
        with contextlib.suppress(RuntimeError):  # no running loop: no live line
            waiting = self._wait_line(e.step, e.purpose)
            self._waiting = asyncio.get_running_loop().create_task(waiting)

    def _on_token(self, e: ev.TokenStream) -> None:
        self._chars += len(e.text)
        self._tokens += 1  # one streamed chunk is about one token

    def _on_model_exchange(self, e: ev.ModelExchange) -> None:
        if not e.background:  # the step prepared ahead: not the call being waited for
            self._stop_waiting()

    async def _wait_line(self, step: int | None, purpose: str) -> None:
        """Say what the call waits for, for how long and how much the model wrote, so a slow
        or stuck server is visible: every second on a terminal, every `log_every` seconds in a
        log ("… step 2 · waiting for the model: propose · 14 s")."""
        started = time.monotonic()
        every = 1.0 if self._live else self._log_every
        while True:
            await asyncio.sleep(every)
            seconds = int(time.monotonic() - started)
            what = call_wait(step, purpose, streaming=self._tokens > 0)
            wrote = f", {self._tokens} tokens" if self._tokens else ""
            text = f"  … {what} · {seconds} s{wrote}"
            if self._live:
                self._set_status(text)
            else:
                self._line(text)

    def _stop_waiting(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None

    def _on_model_retried(self, e: ev.ModelRetried) -> None:
        self._line(f"  ↻ the {e.purpose} reply was broken ({e.reason}): asked again")

    def _on_server_paused(self, e: ev.ServerPaused) -> None:
        self._stop_waiting()
        limit = f"for up to {e.wait:g} s (server_wait)" if e.wait is not None else "until it does"
        self._line(f"⏸ {e.message}")
        self._line(
            f"  paused, the plan kept: checking every {e.every:g} s whether the server answers "
            f"again, {limit}; then the {e.purpose} call is made again (Ctrl-C stops)"
        )

    def _on_server_resumed(self, e: ev.ServerResumed) -> None:
        self._line(f"▶ the model server answers again after {e.waited:.0f} s: retrying")

    def _on_feedback_delivered(self, e: ev.FeedbackDelivered) -> None:
        where = f"step {e.step}, {e.purpose}" if e.step is not None else e.purpose
        self._line(f"  ✉ your message was given to the model ({where})")

    def _on_edits_applied(self, e: ev.EditsApplied) -> None:
        self._stop_waiting()  # a prepared step's held reply (its own end was not shown) is in
        self._line(f"  edited: {', '.join(e.changed) or '(nothing)'}")

    def _on_edit_refused(self, e: ev.EditRefused) -> None:
        self._stop_waiting()
        first = e.reason.strip().splitlines()[0] if e.reason.strip() else "refused"
        self._line(f"  ✗ edit refused: {first}")

    def _on_show_requested(self, e: ev.ShowRequested) -> None:
        asked = ", ".join(e.asked)
        refused = f", {len(e.refused)} refused" if e.refused else ""
        self._line(
            f"  ↪ model asked to see {asked} (round {e.round}/{e.max_rounds}, "
            f"{e.lines} lines shown{refused})"
        )

    def _on_tool_call_finished(self, e: ev.ToolCallFinished) -> None:
        self._line(f"  {'✓' if e.ok else '✗'} {visible(tool_line(e))}")

    def _on_action_applied(self, e: ev.ActionApplied) -> None:
        mark = "✓" if e.ok else "✗"
        self._line(f"  {mark} sandbox: {e.action}")

    def _on_attempt_started(self, e: ev.AttemptStarted) -> None:
        if e.attempt:
            self._line(f"  fixing (attempt {e.attempt}/{e.max_attempts})")

    def _on_tests_started(self, e: ev.TestsStarted) -> None:
        self._stop_waiting()
        self._set_status(f"  … running {e.command}")

    def _on_tests_finished(self, e: ev.TestsFinished) -> None:
        if e.scope == "before":  # a test-first step's new tests on the old code: must fail
            said = "does not test the change" if e.ok else "expected"
            self._line(f"  {'✗' if e.ok else '✓'} before the change: {e.summary} ({said})")
            return
        mark = "✓" if e.ok else "✗"
        label = TEST_SCOPES.get(e.scope, "tests")
        if e.scope == "full" and self._narrowed_before:
            label = "full suite"  # after a passing narrowed run of the same attempt
        self._narrowed_before = e.scope != "full" and e.ok
        self._line(f"  {mark} {label}: {e.summary}")
        for line in _last_lines(e.output_tail):
            self._line(f"    │ {line}")

    def _on_check_finished(self, e: ev.CheckFinished) -> None:
        if e.check:  # a declared check: its findings, new and old
            said = e.summary + ("" if e.ok else " (sent to the model to fix)")
        else:
            said = "passed" if e.ok else "refused (sent to the model to fix)"
        self._line(f"  {'✓' if e.ok else '✗'} {e.name}: {said} in {e.duration:.1f}s")
        for line in _last_lines(e.output):
            self._line(f"    │ {line}")

    def _on_shadow_ready(self, e: ev.ShadowReady) -> None:
        if e.seconds >= MAP_SAID_AFTER:  # a wait noticed: said what it was
            how = "from a spare" if e.from_spare else "a full checkout (the next ones reuse it)"
            self._line(f"  shadow worktree: {how}, {e.seconds:.1f} s")

    def _on_context_ready(self, e: ev.ContextReady) -> None:
        if e.seconds >= MAP_SAID_AFTER or e.files_left:  # a wait noticed, or a map not whole
            left = f", cut short: {e.files_left:,} not read yet" if e.files_left else ""
            self._line(
                f"  map: {e.files:,} files in {e.seconds:.1f} s ({e.files_read:,} read, "
                f"{e.files_reused:,} from the cache{left})"
            )

    def _on_baseline_ready(self, e: ev.BaselineReady) -> None:
        how = "recorded earlier for this commit" if e.recorded else e.summary
        self._line(f"  baseline (the starting commit): {how}")
        if e.failing:
            self._line(f"    {_old_line(e.failing)}")

    def _on_baseline_failed(self, e: ev.BaselineFailed) -> None:
        self._stop_waiting()  # the error line that follows says what to do

    def _on_proposal_ready(self, e: ev.ProposalReady) -> None:
        if e.written_by_tests:  # left out of the step's commit unless the human keeps them
            self._line(f"  {written_line(e.written_by_tests)}")
        for line in old_failure_lines(e.fixed, e.still_failing, e.old_failures, e.disowned):
            self._line(f"  {line}")

    def _on_step_preparing(self, e: ev.StepPreparing) -> None:
        self._line(f"  (step {e.step} is being prepared meanwhile)")

    def _on_next_step_prepared(self, e: ev.NextStepPrepared) -> None:
        if e.ready:
            self._line(f"  (step {e.step} was prepared meanwhile: it is ready)")

    def _on_next_step_restarted(self, e: ev.NextStepRestarted) -> None:
        self._line(f"  ({restarted_line(e.step)})")

    def _on_diagnosis(self, e: ev.Diagnosis) -> None:
        first = e.text.strip().splitlines()[0] if e.text.strip() else ""
        self._line(f"  diagnosis: {first[:160]}")

    def _on_stuck(self, e: ev.Stuck) -> None:
        self._line(f"  ! {e.reason}")

    def _on_decision(self, e: ev.DecisionMade) -> None:
        if e.decision == "accept" and e.by != BY_YOU:  # nobody was asked: say who accepted
            self._line(f"  accepted: {e.by}")
        elif e.decision == "accept" and e.kept:  # hunks left out: the kept ones passed
            self._line(f"  accepted: {e.kept}")
        if e.kept_written:
            self._line(f"  kept, {WRITTEN_BY_TESTS}: {', '.join(e.kept_written)}")

    def _on_step_committed(self, e: ev.StepCommitted) -> None:
        self._line(f"  ✓ committed {e.sha[:8]} {e.title}")

    def _on_accept_refused(self, e: ev.AcceptRefused) -> None:
        lines = visible(e.message).splitlines() or [""]
        self._line(f"  ✗ {lines[0]}")
        for line in lines[1:]:
            self._line(f"    {line}")

    def _on_step_skipped(self, e: ev.StepSkipped) -> None:
        self._line(f"  – step {e.step} not committed: {e.reason}")

    def _on_budget_warning(self, e: ev.BudgetWarning) -> None:
        self._line(f"  ! {e.message}")

    def _on_error(self, e: ev.ErrorEvent) -> None:
        self._stop_waiting()
        self._line(f"error: {e.message}")

    def _on_usage(self, e: ev.UsageUpdated) -> None:
        self._usage = e

    def _on_session_finished(self, e: ev.SessionFinished) -> None:
        self._stop_waiting()
        # An error was printed when it happened; don't repeat it.
        said = "" if e.outcome == "error" else f": {e.message}"
        self._line(f"Finished ({e.outcome}){said}")
        if self._usage is not None:
            u = self._usage
            cost = format_cost(u.usd)
            self._line(f"Model usage: {u.prompt_tokens + u.completion_tokens:,} tokens, {cost}")


SHOWN_TAIL_LINES = 5  # a failing run's last lines under its progress line
_LINE_CHARS = 200


def _last_lines(tail: str) -> list[str]:
    """The last non-blank lines of a failing run's output, each cut to a terminal's width."""
    lines = [line.rstrip() for line in tail.splitlines() if line.strip()]
    return [line[:_LINE_CHARS] for line in lines[-SHOWN_TAIL_LINES:]]


def _old_line(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:3]) + (" …" if len(ids) > 3 else "")
    return f"{len(ids)} failing before this session: {shown}"


def _waits_for(step: ev.StepInfo, steps: tuple[ev.StepInfo, ...]) -> str:
    """The plan's edges where they say more than "after every step before it": " (after 1, 3)",
    or " (independent)" for a later step that waits for none."""
    before = [s.index for s in steps if s.index < step.index]
    if not before or list(step.after) == before:
        return ""
    return f" (after {', '.join(map(str, step.after))})" if step.after else " (independent)"
