"""Engine events rendered into the panes: each `EngineEvent` goes to its `_on_<type>` handler,
which updates the plan, diff, tests, chat, tree marks and status bar."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tui_engineer.engine import events as ev
from tui_engineer.engine.chat_target import restarted_line
from tui_engineer.engine.edit_watch import WATCHED_PURPOSES
from tui_engineer.engine.hunks import HunkRef
from tui_engineer.engine.review import BY_YOU, old_failure_lines, written_line
from tui_engineer.engine.tool_use import tool_line
from tui_engineer.engine.waits import call_wait
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.bridge import EngineEvent
from tui_engineer.tui.panes.chat import ChatInput, ChatPane
from tui_engineer.tui.panes.diff_review import ReviewDiffView
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.panes.test_output import TestOutputPane


class EngineEventView:
    """Mixed into `TuiEngineerApp` (before `App`): the app's panes are its attributes."""

    options: RunOptions
    deterministic: bool
    proposals_seen: int
    stopped_by: str
    server_paused: bool
    _tests_running: bool
    _changes: set[str]
    _just_committed: str  # "committed <sha> · " until the next step starts
    _call: tuple[int | None, str]  # the model call under way: its step and purpose
    status: StatusBar
    chat: ChatPane
    chat_input: ChatInput
    diff: ReviewDiffView
    plan_pane: PlanPane
    test_pane: TestOutputPane

    def apply_layout(self) -> None: ...  # the app's

    committed_summary: Callable[[], str]  # review_keys.py (an annotation: no stub in the MRO)
    _scrub: Callable[[str], str]  # suite_view.py
    _idle: Callable[[], str]  # suite_view.py
    _review_marks: Callable[[ev.ProposalReady], Awaitable[None]]  # pair_keys.py

    async def on_engine_event(self, message: EngineEvent) -> None:
        handler = getattr(self, f"_on_{message.event.type}", None)
        if handler is not None:
            await handler(message.event)

    async def _on_session_started(self, event: ev.SessionStarted) -> None:
        self.stopped_by = ""
        self.status.model = event.model
        self.status.sandbox = event.sandbox
        self.status.bwrap = event.bwrap
        self.status.phase = "planning" if self.options.plan else "working"
        self.status.start_clock()

    async def _on_session_resumed(self, event: ev.SessionResumed) -> None:
        await self.chat.note(event.message)

    async def _on_notice(self, event: ev.Notice) -> None:
        await self.chat.note(event.message)

    async def _on_plan_ready(self, event: ev.PlanReady) -> None:
        known = set(self.plan_pane.rows)
        self.plan_pane.set_steps(event.steps)
        self.apply_layout()  # the plan pane's height follows its steps
        new = [(step.index, step.listed) for step in event.steps if step.index not in known]
        await self.chat.show_plan(new)

    async def _on_step_started(self, event: ev.StepStarted) -> None:
        self.plan_pane.set_status(event.index, "proposing")
        # The commit just made stays in sight while the next step gets ready.
        committed, self._just_committed = getattr(self, "_just_committed", ""), ""
        self.status.phase = f"{committed}step {event.index}: {event.title}"

    async def _on_model_call_started(self, event: ev.ModelCallStarted) -> None:
        self.status.busy = f"model: {event.purpose}"
        self._call = (event.step, event.purpose)
        self.status.call_started(call_wait(event.step, event.purpose))
        where = f"step {event.step} · " if event.step is not None else ""
        # A plan arrives as JSON: "Planning…" while it streams, then the steps (PlanReady).
        quiet = "Planning…" if event.purpose == "plan" else ""
        await self.chat.begin_reply(f"{self.status.model} — {where}{event.purpose}", quiet=quiet)

    async def _on_token(self, event: ev.TokenStream) -> None:
        call = getattr(self, "_call", None)
        if call is not None and self.status.detail == call_wait(*call):  # its first token
            self.status.detail = call_wait(*call, streaming=True)
        await self.chat.add_text(event.text)

    async def _on_model_exchange(self, event: ev.ModelExchange) -> None:
        if event.background:  # the step prepared ahead: not the reply (or spinner) on screen
            return
        await self.chat.end_reply()
        self.status.busy = self._idle()

    async def _on_model_call_failed(self, event: ev.ModelCallFailed) -> None:
        """The reply so far stays visible; the spinner stops (the error follows)."""
        await self.chat.end_reply()
        self.status.busy = self._idle()
        if event.stopped:  # on purpose: say why (an edit reply's refusal says it instead)
            if event.purpose not in WATCHED_PURPOSES:
                await self.chat.note(event.error, error=True)
            return
        got = f", {event.completion_tokens:,} of reply" if event.partial_reply else ""
        await self.chat.note(
            f"Model call ({event.purpose}) failed after ~{event.prompt_tokens:,} tokens of "
            f"prompt{got}.",
            error=True,
        )

    async def _on_server_paused(self, event: ev.ServerPaused) -> None:
        self.server_paused = True
        self.status.busy = ""
        self.status.phase = "paused: the model server does not answer (r retries)"
        await self.chat.note(
            f"{event.message}\nPaused, the plan kept: the {event.purpose} call is made again as "
            f"soon as the server answers (checked every {event.every:g} s). Press r to retry "
            "now; q quits (accepted steps stay committed).",
            error=True,
        )
        self.notify(
            "The model server does not answer: paused. r retries now; it also goes on by itself "
            "when the server is back.",
            title="Model server gone",
            severity="warning",
            timeout=12,
        )
        self.refresh_bindings()

    async def _on_server_resumed(self, event: ev.ServerResumed) -> None:
        self.server_paused = False
        why = "you asked" if event.by == "human" else "the server answers again"
        self.status.phase = f"retrying the {event.purpose} call"
        await self.chat.note(f"Retrying the {event.purpose} call ({why}).")
        self.refresh_bindings()

    async def _on_model_retried(self, event: ev.ModelRetried) -> None:
        await self.chat.note(f"The reply was broken ({event.reason}); asking again.", error=True)

    async def _on_usage(self, event: ev.UsageUpdated) -> None:
        self.status.estimated = event.estimated
        self.status.tokens = event.prompt_tokens + event.completion_tokens
        self.status.usd = event.usd
        self.status.max_tokens, self.status.max_usd = event.max_tokens, event.max_usd

    async def _on_feedback_delivered(self, event: ev.FeedbackDelivered) -> None:
        self.chat.delivered(event.text, event.purpose, event.step)

    async def _on_edit_refused(self, event: ev.EditRefused) -> None:
        await self.chat.note(f"Edit refused (step {event.step}): {event.reason}", error=True)

    async def _on_tool_call_finished(self, event: ev.ToolCallFinished) -> None:
        """The model used one of the MCP servers' tools before its reply."""
        line = tool_line(event)
        await self.chat.note(line[0].upper() + line[1:], error=not event.ok)

    async def _on_show_requested(self, event: ev.ShowRequested) -> None:
        """The model asked to see more before editing: say what, and what it got."""
        refused = f"; refused: {'; '.join(event.refused)}" if event.refused else ""
        await self.chat.note(
            f"Model asked to see {', '.join(event.asked)} (round {event.round}/"
            f"{event.max_rounds}): {event.lines} lines shown{refused}."
        )

    async def _on_attempt_started(self, event: ev.AttemptStarted) -> None:
        if event.attempt > 0:
            detail = f"{event.attempt}/{event.max_attempts}"
            self.plan_pane.set_status(event.step, "fixing", detail)
            self.status.phase = f"step {event.step}: fixing ({detail})"
        else:
            self.plan_pane.set_status(event.step, "proposing")

    async def _on_edits_applied(self, event: ev.EditsApplied) -> None:
        """Work in progress: the step's diff so far, before its tests ran (a fix loop shows
        each attempt as it lands)."""
        if not event.diff.strip():
            return
        self.diff.show_diff(event.diff)
        self.diff.border_title = f"Diff — step {event.step}, in progress (not reviewed yet)"
        marks = {file.path: file.status for file in self.diff.files}
        self._changes = set(marks)
        self._tree_marks(marks)
        touched = set(event.changed)  # this apply's files; the diff is the whole step's
        counts = [(f.path, f.added, f.removed) for f in self.diff.files if f.path in touched]
        await self.chat.edited(counts or [(f.path, f.added, f.removed) for f in self.diff.files])

    async def _on_stuck(self, event: ev.Stuck) -> None:
        await self.chat.note(f"Step {event.step} looks stuck: {event.reason}", error=True)

    async def _on_proposal_ready(self, event: ev.ProposalReady) -> None:
        self.proposals_seen += 1
        # A step prepared ahead shows its held reply just before: it ends here.
        await self.chat.end_reply()
        self.diff.show_diff(event.diff, event.written_diff)
        self.diff.start_review(event.step, {HunkRef(p, i) for p, i in event.dropped})
        edited = " · edited by you" if event.edited else ""
        self.diff.border_title = f"Diff — step {event.step}{edited}"
        marks = {path: letter[:1] for letter, path in event.changes}
        self._changes = set(marks)
        self._tree_marks(marks)
        self.plan_pane.set_status(event.step, "awaiting review")
        tests = "tests pass" if event.tests_ok else f"tests: {event.summary}"
        await self._review_marks(event)
        # Affected tests first, then the full suite: the review shows both runs (and a
        # session without tests says so where the results would be).
        runs = event.test_runs if len(event.test_runs) > 1 or event.unverified else ()
        self.test_pane.show_runs([self._scrub(run) for run in runs])
        self.status.phase = f"review step {event.step} ({tests})"  # the keys are in the footer
        for note in event.notes:
            await self.chat.note(note)
        if event.written_by_tests:
            line = written_line(event.written_by_tests)
            await self.chat.note(
                f"{line[0].upper()}{line[1:]}. To commit one too, press space on it in the "
                "Diff pane."
            )
        for note in old_failure_lines(event.fixed, event.still_failing, event.old_failures):
            await self.chat.note(note)
        self._show_pane("diff")
        if not self.chat_input.value and self.focused is self.chat_input:
            self.diff.focus()  # the review keys work at once; a half-typed message keeps focus

    def _tree_marks(self, marks: dict[str, str]) -> None:
        if self.screen_stack:
            for tree in self.screen_stack[0].query(RepoTree):
                tree.mark_changes(marks)

    async def _on_step_preparing(self, event: ev.StepPreparing) -> None:
        """A later step is being prepared beside this one (engine/pipeline.py)."""
        self.plan_pane.set_status(event.step, "preparing")

    async def _on_next_step_prepared(self, event: ev.NextStepPrepared) -> None:
        """A later step was proposed and tested while this one is reviewed (or dropped)."""
        self.plan_pane.set_status(event.step, "prepared" if event.ready else "pending")

    async def _on_next_step_restarted(self, event: ev.NextStepRestarted) -> None:
        """A chat message named the step prepared ahead: it is prepared again with it now."""
        self.plan_pane.set_status(event.step, "preparing again")
        await self.chat.note(restarted_line(event.step))

    async def _on_decision(self, event: ev.DecisionMade) -> None:
        if event.decision == "edited":  # tested again, then reviewed again: the marks stay
            self.diff.pause_review()
            return
        if event.decision == "accept":  # on disk: a kill from here on still commits it
            self.status.phase = "accepted: committing"
        if event.decision == "reject":
            self.plan_pane.set_status(event.step, "rejected")
            await self.chat.note(f"Step {event.step} rejected: {event.reason}")
        elif event.decision == "accept" and event.by != BY_YOU:  # nobody pressed a key
            await self.chat.note(f"Step {event.step} accepted: {event.by}.")
        elif event.decision == "undo":
            self.plan_pane.set_status(event.step, "pending")
            self.status.phase = f"step {event.step} is made again on the new HEAD"
            await self.chat.note(
                f"Step {event.step}'s proposal was built on the undone step: it is made again."
            )
        elif event.decision == "accept" and event.kept:
            await self.chat.note(f"Step {event.step} accepted ({event.kept}): its tests pass.")
        self._changes = set()
        self._tree_marks({})
        self.diff.end_review()
        self.diff.show_diff("")
        self.diff.border_title = "Diff"
        self.test_pane.show_runs(())

    async def _on_step_committed(self, event: ev.StepCommitted) -> None:
        self.plan_pane.set_status(event.step, "accepted", event.sha[:7])
        self.status.phase = "committed" + ("" if self.deterministic else f" {event.sha[:7]}")
        self._just_committed = f"{self.status.phase} · "
        sha = "" if self.deterministic else f" as {event.sha[:7]}"
        await self.chat.note(f"✓ Step {event.step} committed{sha}: {event.title}")

    async def _on_step_undone(self, event: ev.StepUndone) -> None:
        self.plan_pane.set_status(event.step, "undone")
        await self.chat.note(event.message)
        from tui_engineer.tui.screens import StillWrongScreen

        if isinstance(self.screen, StillWrongScreen):
            self.screen.set_summary(self.committed_summary())

    async def _on_undo_refused(self, event: ev.UndoRefused) -> None:
        """The review goes on, with the same proposal."""
        current = self.plan_pane.current
        self.status.phase = f"review step {current} (undo refused)" if current else "review"
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Cannot undo", severity="error", timeout=12)

    async def _on_accept_refused(self, event: ev.AcceptRefused) -> None:
        """Nothing was committed; the proposal is shown again next (ProposalReady)."""
        self.plan_pane.set_status(event.step, "awaiting review")
        self.status.phase = f"review step {event.step} (not committed: git refused it)"
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Not committed", severity="error", timeout=20)

    async def _on_step_skipped(self, event: ev.StepSkipped) -> None:
        self.plan_pane.set_status(event.step, "skipped")

    async def _on_budget_warning(self, event: ev.BudgetWarning) -> None:
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Budget", severity="warning", timeout=10)

    async def _on_error(self, event: ev.ErrorEvent) -> None:
        # Nothing is under way any more: no spinner, and the step in hand is marked failed
        # rather than left at "fixing 2/3".
        self.status.busy = ""
        self.status.phase = "stopped"
        self.stopped_by = event.message
        current = self.plan_pane.current
        if current is not None and self.plan_pane.status_of(current) in {
            "proposing",
            "testing",
            "fixing",
        }:
            self.plan_pane.set_status(current, "failed")
        await self.chat.note(event.message, error=True)
        self.notify(event.message, title="Error", severity="error", timeout=15)

    async def _on_verdict(self, event: ev.VerdictRecorded) -> None:
        level = "perfect" if event.perfect else "works" if event.worked else "ran"
        await self.chat.note(f"Verdict saved: {level if event.ran else 'did not run'}")

    async def _on_session_finished(self, event: ev.SessionFinished) -> None:
        await self.chat.note(f"Session {event.outcome}: {event.message}")
        await self.chat.note("Type a new request below to start again, or press q to quit.")
