"""The chat pane: the model's replies stream in as Markdown; the human's messages show whether
they were delivered to a model call yet. The input box lives apart (always on screen):
chat_input.py."""

from __future__ import annotations

import asyncio

from rich.markup import escape
from textual import on
from textual.containers import VerticalScroll
from textual.timer import Timer
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from tui_engineer.base.names import readable
from tui_engineer.edits.prose import EditBlockFilter
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.chat_target import restarted_line
from tui_engineer.engine.reviews.review import BY_YOU, old_failure_lines, tests_result, written_line
from tui_engineer.engine.steps.edit_watch import WATCHED_PURPOSES
from tui_engineer.engine.tool_use import tool_line
from tui_engineer.tui.engine_messages import EngineMessage, heard
from tui_engineer.tui.panes.chat_text import code_paths, edited_line
from tui_engineer.tui.panes.diff_rows import parse_unified_diff

MAX_ENTRIES = 300  # older entries are dropped: a long session must not grow the DOM forever
# Streamed text reaches the Markdown at most this often. Each append re-lays-out the pane; fed
# per token at 1,000 tokens/s, appends would run back to back and starve the keyboard.
FLUSH_SECONDS = 0.1


class ChatPane(VerticalScroll):
    DEFAULT_CSS = """
    ChatPane { padding: 0 1; }
    ChatPane > .chat-who { margin-top: 1; text-style: bold; color: $primary; }
    ChatPane > .chat-you { margin-top: 1; color: $accent; }
    ChatPane > .chat-note { margin-top: 1; color: $text-muted; }
    ChatPane > .chat-error { margin-top: 1; color: $error; }
    ChatPane > .chat-plan { color: $foreground; }
    ChatPane > Markdown { margin: 0; padding: 0; background: transparent; }
    ChatPane > Markdown.chat-edited { margin-top: 1; color: $text-muted; }
    """

    def __init__(
        self, *, deterministic: bool = False, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.deterministic = deterministic  # snapshots: no commit ids
        self.model = ""  # the session's model, named above each of its replies
        self._listed: set[int] = set()  # the plan's steps as last listed (a new plan: its new)
        self._stream: MarkdownStream | None = None
        self._reply: Markdown | None = None
        self._queued: list[tuple[str, Static]] = []
        self._shown: dict[Static, str] = {}  # a queued message as shown, when it differs
        self._unflushed: list[str] = []  # streamed text not yet given to the Markdown
        self._flush_timer: Timer | None = None
        self._quiet: Static | None = None  # the one-line stand-in for a reply not shown raw
        self._quiet_label = ""
        self._quiet_chars = 0
        self._edits = EditBlockFilter()  # the reply's SEARCH/REPLACE blocks stay out of the chat

    def on_mount(self) -> None:
        self.anchor()

    async def _add(self, *widgets: Static | Markdown) -> None:
        extra = len(self.children) + len(widgets) - MAX_ENTRIES
        if extra > 0:
            await self.remove_children(list(self.children[:extra]))
        await self.mount_all(widgets)

    async def note(self, text: str, *, error: bool = False) -> None:
        """A line from tui-engineer itself (a notice, an error, a step's outcome)."""
        text = readable(text)  # a file name in it may not be UTF-8
        await self._add(Static(text, classes="chat-error" if error else "chat-note", markup=False))

    async def user_message(self, text: str, *, queued: bool, sent: str | None = None) -> None:
        """The human's message; when `queued`, it is marked delivered by `delivered()` later.
        `sent`: what the engine gets, when it differs (a shell command's output attached)."""
        entry = Static(self._you(text, "queued for the next model call" if queued else ""))
        entry.add_class("chat-you")
        if queued:
            self._queued.append((sent or text, entry))
            self._shown[entry] = text
        await self._add(entry)

    def delivered(self, text: str, purpose: str, step: int | None = None) -> bool:
        """The engine sent `text` with a model call (of `step`); mark the oldest matching
        message, naming the step that took it."""
        call = f"step {step}'s {purpose} call" if step is not None else f"the {purpose} call"
        for i, (queued, entry) in enumerate(self._queued):
            if queued == text:
                entry.update(self._you(self._shown.pop(entry, text), f"✓ delivered to {call}"))
                del self._queued[i]
                return True
        return False

    def not_delivered(self) -> None:
        """The session ended before a model call took the queued messages: say so on each."""
        why = "not sent: the session ended before the model's next call"
        for text, entry in self._queued:
            entry.update(self._you(self._shown.pop(entry, text), why))
        self._queued.clear()

    @staticmethod
    def _you(text: str, state: str) -> str:
        return f"You: {escape(text)}" + (f"  [dim]({state})[/]" if state else "")

    async def begin_reply(self, title: str, *, quiet: str = "") -> None:
        """A model call started: its text streams into a new Markdown block under `title`.
        With `quiet` (e.g. "Planning…"), the raw text (JSON) is not shown: one line says what
        is going on and counts what arrived, until `show_plan` replaces it."""
        await self.end_reply()
        header = Static(title, classes="chat-who", markup=False)
        if quiet:
            self._quiet_label, self._quiet_chars = quiet, 0
            self._quiet = Static(quiet, classes="chat-note", markup=False)
            await self._add(header, self._quiet)
            return
        self._quiet = None
        self._edits = EditBlockFilter()
        self._reply = Markdown()
        await self._add(header, self._reply)
        self._stream = Markdown.get_stream(self._reply)

    async def add_text(self, text: str) -> None:
        if self._quiet is not None:
            self._quiet_chars += len(text)
            self._quiet.update(f"{self._quiet_label} ({self._quiet_chars:,} characters)")
            return
        if self._stream is None:
            await self.begin_reply("model")
        shown = self._edits.feed(text)
        if shown:
            self._unflushed.append(code_paths(shown))
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self._flush)

    async def _flush(self) -> None:
        self._flush_timer = None
        if self._stream is not None and self._unflushed:
            text = "".join(self._unflushed)
            self._unflushed.clear()
            await self._stream.write(text)

    async def show_plan(self, steps: list[tuple[int, str]]) -> None:
        """The plan arrived: a readable list of its steps, in place of the "Planning…" line
        (nothing when no plan call stands waiting, e.g. a one-step session)."""
        if self._quiet is None:
            return
        count = f"{len(steps)} step" + ("" if len(steps) == 1 else "s")
        lines = [f"Plan ({count}):"] + [f"  {index}. {title}" for index, title in steps]
        self._quiet.update("\n".join(lines))
        self._quiet.set_classes("chat-plan")
        self._quiet = None

    async def edited(self, files: list[tuple[str, int, int]]) -> None:
        """One line per applied edit: each path links to its part of the diff."""
        if files:
            line = Markdown(edited_line(files), open_links=False, classes="chat-edited")
            await self._add(line)

    async def end_reply(self) -> None:
        rest = self._edits.finish()
        if rest and self._stream is not None:
            self._unflushed.append(code_paths(rest))
        if self._flush_timer is not None:
            self._flush_timer.stop()
        await self._flush()
        if self._stream is not None:
            stream, self._stream = self._stream, None
            # A reply that was all edit blocks wrote nothing: let the stream's task start
            # before cancelling it, or awaiting a never-started task raises CancelledError here.
            await asyncio.sleep(0)
            await stream.stop()

    @property
    def has_unflushed_text(self) -> bool:
        """Streamed text still waiting for the next batched write into the Markdown."""
        return bool(self._unflushed) or self._flush_timer is not None

    @property
    def reply_text(self) -> str:
        """The Markdown source of the reply being streamed (or the last one)."""
        return self._reply.source if self._reply is not None else ""

    # ----- the engine's events, as the conversation tells them (tui/engine_messages.py)

    @on(heard(ev.SessionStarted))
    def _session_started(self, message: EngineMessage[ev.SessionStarted]) -> None:
        self.model = message.event.model

    @on(heard(ev.SessionResumed))
    @on(heard(ev.Notice))
    @on(heard(ev.StepUndone))
    async def _said(self, message: EngineMessage[ev.Notice]) -> None:
        await self.note(message.event.message)

    @on(heard(ev.UndoRefused))
    @on(heard(ev.AcceptRefused))
    @on(heard(ev.BudgetWarning))
    @on(heard(ev.ErrorEvent))
    async def _said_as_error(self, message: EngineMessage[ev.ErrorEvent]) -> None:
        await self.note(message.event.message, error=True)

    @on(heard(ev.PlanReady))
    async def _plan_ready(self, message: EngineMessage[ev.PlanReady]) -> None:
        steps = message.event.steps
        new = [(step.index, step.listed) for step in steps if step.index not in self._listed]
        self._listed = {step.index for step in steps}
        await self.show_plan(new)

    @on(heard(ev.ModelCallStarted))
    async def _model_call_started(self, message: EngineMessage[ev.ModelCallStarted]) -> None:
        event = message.event
        where = f"step {event.step} · " if event.step is not None else ""
        # A plan arrives as JSON: "Planning…" while it streams, then the steps (PlanReady).
        quiet = "Planning…" if event.purpose == "plan" else ""
        await self.begin_reply(f"{self.model} — {where}{event.purpose}", quiet=quiet)

    @on(heard(ev.TokenStream))
    async def _token(self, message: EngineMessage[ev.TokenStream]) -> None:
        await self.add_text(message.event.text)

    @on(heard(ev.ModelExchange))
    async def _model_exchange(self, message: EngineMessage[ev.ModelExchange]) -> None:
        if not message.event.background:  # the step prepared ahead: not the reply on screen
            await self.end_reply()

    @on(heard(ev.ModelCallFailed))
    async def _model_call_failed(self, message: EngineMessage[ev.ModelCallFailed]) -> None:
        """The reply so far stays visible (the error follows)."""
        event = message.event
        await self.end_reply()
        if event.stopped:  # on purpose: say why (an edit reply's refusal says it instead)
            if event.purpose not in WATCHED_PURPOSES:
                await self.note(event.error, error=True)
            return
        got = f", {event.completion_tokens:,} of reply" if event.partial_reply else ""
        await self.note(
            f"Model call ({event.purpose}) failed after ~{event.prompt_tokens:,} tokens of "
            f"prompt{got}.",
            error=True,
        )

    @on(heard(ev.ServerPaused))
    async def _server_paused(self, message: EngineMessage[ev.ServerPaused]) -> None:
        event = message.event
        await self.note(
            f"{event.message}\nPaused, the plan kept: the {event.purpose} call is made again as "
            f"soon as the server answers (checked every {event.every:g} s). Press r to retry "
            "now; q quits (accepted steps stay committed).",
            error=True,
        )

    @on(heard(ev.ServerResumed))
    async def _server_resumed(self, message: EngineMessage[ev.ServerResumed]) -> None:
        event = message.event
        why = "you asked" if event.by == "human" else "the server answers again"
        await self.note(f"Retrying the {event.purpose} call ({why}).")

    @on(heard(ev.ModelRetried))
    async def _model_retried(self, message: EngineMessage[ev.ModelRetried]) -> None:
        await self.note(f"The reply was broken ({message.event.reason}); asking again.", error=True)

    @on(heard(ev.FeedbackDelivered))
    def _feedback_delivered(self, message: EngineMessage[ev.FeedbackDelivered]) -> None:
        self.delivered(message.event.text, message.event.purpose, message.event.step)

    @on(heard(ev.EditRefused))
    async def _edit_refused(self, message: EngineMessage[ev.EditRefused]) -> None:
        event = message.event
        await self.note(f"Edit refused (step {event.step}): {event.reason}", error=True)

    @on(heard(ev.ToolCallFinished))
    async def _tool_call_finished(self, message: EngineMessage[ev.ToolCallFinished]) -> None:
        """The model used one of the MCP servers' tools before its reply."""
        line = tool_line(message.event)
        await self.note(line[0].upper() + line[1:], error=not message.event.ok)

    @on(heard(ev.ShowRequested))
    async def _show_requested(self, message: EngineMessage[ev.ShowRequested]) -> None:
        """The model asked to see more before editing: say what, and what it got."""
        event = message.event
        refused = f"; refused: {'; '.join(event.refused)}" if event.refused else ""
        await self.note(
            f"Model asked to see {', '.join(event.asked)} (round {event.round}/"
            f"{event.max_rounds}): {event.lines} lines shown{refused}."
        )

    @on(heard(ev.EditsApplied))
    async def _edits_applied(self, message: EngineMessage[ev.EditsApplied]) -> None:
        """A line naming the files this apply changed (the diff is the whole step's)."""
        event = message.event
        if not event.diff.strip():
            return
        files = parse_unified_diff(event.diff)
        touched = set(event.changed)
        counts = [(f.path, f.added, f.removed) for f in files if f.path in touched]
        await self.edited(counts or [(f.path, f.added, f.removed) for f in files])

    @on(heard(ev.Stuck))
    async def _stuck(self, message: EngineMessage[ev.Stuck]) -> None:
        event = message.event
        stuck = "looks stuck: " if event.reason.startswith("stuck") else ""  # not a timeout
        await self.note(f"Step {event.step} {stuck}{event.reason}", error=True)

    @on(heard(ev.ProposalReady))
    async def _proposal_ready(self, message: EngineMessage[ev.ProposalReady]) -> None:
        event = message.event
        # A step prepared ahead shows its held reply just before: it ends here.
        await self.end_reply()
        await self._review_marks(event)
        for note in event.notes:
            await self.note(note)
        if event.written_by_tests:
            line = written_line(event.written_by_tests)
            await self.note(
                f"{line[0].upper()}{line[1:]}. To commit one too, press space on it in the "
                "Diff pane."
            )
        for note in old_failure_lines(
            event.fixed, event.still_failing, event.old_failures, event.disowned
        ):
            await self.note(note)

    async def _review_marks(self, event: ev.ProposalReady) -> None:
        """What the human did to this proposal: kept hunks that failed, a hand edit."""
        if event.partial and not event.tests_ok:
            await self.note(
                f"Step {event.step}, {event.partial}: {event.summary.split(': ', 2)[-1]}. Not "
                "committed: the kept hunks fail their tests. Still under review: keep more "
                "hunks (space), edit by hand (o), or accept the whole.",
                error=True,
            )
        elif event.edited:
            result = tests_result(event.tests_ok, event.summary, event.disowned)
            await self.note(f"Step {event.step} edited by you, tested again: {result}.")

    @on(heard(ev.ReviewNotesDelivered))
    async def _review_notes_delivered(
        self, message: EngineMessage[ev.ReviewNotesDelivered]
    ) -> None:
        event = message.event
        where = f"step {event.step}'s {event.purpose} call" if event.step else "the next call"
        await self.note(f"Your review (dropped hunks, edits, comments) went with {where}.")

    @on(heard(ev.NextStepRestarted))
    async def _next_step_restarted(self, message: EngineMessage[ev.NextStepRestarted]) -> None:
        """A chat message named the step prepared ahead: it is prepared again with it now."""
        await self.note(restarted_line(message.event.step))

    @on(heard(ev.DecisionMade))
    async def _decision(self, message: EngineMessage[ev.DecisionMade]) -> None:
        event = message.event
        if event.decision == "reject":
            await self.note(f"Step {event.step} rejected: {event.reason}")
        elif event.decision == "accept" and event.by != BY_YOU:  # nobody pressed a key
            await self.note(f"Step {event.step} accepted: {event.by}.")
        elif event.decision == "undo":
            await self.note(
                f"Step {event.step}'s proposal was built on the undone step: it is made again."
            )
        elif event.decision == "accept" and event.kept:
            await self.note(f"Step {event.step} accepted ({event.kept}): its tests pass.")

    @on(heard(ev.StepCommitted))
    async def _step_committed(self, message: EngineMessage[ev.StepCommitted]) -> None:
        event = message.event
        sha = "" if self.deterministic else f" as {event.sha[:7]}"
        await self.note(f"✓ Step {event.step} committed{sha}: {event.title}")

    @on(heard(ev.BaselineReady))
    async def _baseline_ready(self, message: EngineMessage[ev.BaselineReady]) -> None:
        failing = message.event.failing
        if failing:
            shown = ", ".join(failing[:3]) + (" …" if len(failing) > 3 else "")
            await self.note(
                f"{len(failing)} failing before this session: {shown}. Steps are judged "
                "without them (they are not a step's to fix unless it names them)."
            )

    @on(heard(ev.VerdictRecorded))
    async def _verdict(self, message: EngineMessage[ev.VerdictRecorded]) -> None:
        event = message.event
        level = "perfect" if event.perfect else "works" if event.worked else "ran"
        await self.note(f"Verdict saved: {level if event.ran else 'did not run'}")

    @on(heard(ev.SessionFinished))
    async def _session_finished(self, message: EngineMessage[ev.SessionFinished]) -> None:
        event = message.event
        await self.note(f"Session {event.outcome}: {event.message}")
        await self.note("Type a new request below to start again, or press q to quit.")
