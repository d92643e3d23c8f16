"""Engine events as ACP `session/update`s: the plan as `plan` entries that follow each step, the
model's prose as agent message chunks, each proposal as a tool call of kind `edit` with one
`diff` per file, each test run as a tool call of kind `execute` with its result as text.

Synchronous and pure but for reading a proposal's files, which happens at the event (the shadow
then holds exactly that proposal): the agent queues what comes out and sends it in order."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    Cost,
    PlanEntryStatus,
    SessionInfoUpdate,
    ToolCallStart,
    ToolCallUpdate,
    ToolKind,
    UsageUpdate,
)

from tui_engineer.acp.tool_content import (
    Update,
    hunk_locations,
    nothing_proposed,
    proposal_text,
    read_file,
    run_finished,
    run_started,
    test_result_text,
)
from tui_engineer.base.names import readable
from tui_engineer.edits.prose import EditBlockFilter
from tui_engineer.engine import events as ev

# Replies whose prose is worth reading in the editor; a plan arrives as JSON (the plan update
# shows it), a diagnosis as its own prose.
SHOWN_REPLIES = {"propose", "fix", "diagnose", "replan"}


@dataclass
class Entry:
    title: str
    status: PlanEntryStatus = "pending"
    note: str = ""  # "skipped: …", "failed", "undone": said in the entry's text

    def content(self, index: int) -> str:
        text = f"{index}. {self.title}"
        return f"{text} ({self.note})" if self.note else text


@dataclass
class Translator:
    """Turns the events of one session into updates. `root` is the user's repository (where a
    proposal's old text is), `shadow` says where the proposal's new text is at that moment."""

    root: Path
    shadow: Callable[[], Path | None] = lambda: None
    window: Callable[[], int | None] = lambda: None  # the model's context window, when known
    # `usage_update` is no part of the stable schema: sent only to a client that said it reads it.
    reads_usage: bool = False
    entries: dict[int, Entry] = field(default_factory=dict)
    _prose: EditBlockFilter | None = None
    _runs: dict[tuple[int | None, str], str] = field(default_factory=dict)
    _proposals: dict[int, str] = field(default_factory=dict)  # step -> its edit tool call
    _shown: dict[int, ToolCallStart] = field(default_factory=dict)  # step -> that tool call
    _tools: dict[str, str] = field(default_factory=dict)  # an MCP tool call's id -> its ACP id
    _count: int = 0
    _said: str = ""  # the end of the reply's prose sent so far

    def updates(self, event: ev.Event) -> list[Update]:
        handler = getattr(self, f"_on_{event.type}", None)
        return handler(event) if handler is not None else []

    def go_on_from(self, told: Translator) -> None:
        """Go on where a told history (session/load) ended: its plan entries as they stood, so
        the plan never goes back, and its count of tool calls, so no id comes twice."""
        self.entries = {i: Entry(e.title, e.status, e.note) for i, e in told.entries.items()}
        self._count = max(self._count, told._count)

    def new_plan(self) -> None:
        """A new request (a run of its own): its plan replaces the last request's."""
        self.entries = {}

    def _on_session_started(self, event: ev.SessionStarted) -> list[Update]:
        return [titled(event.request)]

    # ----- the plan

    def plan(self) -> Update:
        return update_plan(
            plan_entry(e.content(i), status=e.status) for i, e in sorted(self.entries.items())
        )

    def _on_plan_ready(self, event: ev.PlanReady) -> list[Update]:
        known = self.entries
        self.entries = {s.index: known.get(s.index, Entry(s.listed)) for s in event.steps}
        for step in event.steps:
            self.entries[step.index].title = step.listed
        return [self.plan()]

    def _step(self, index: int, status: PlanEntryStatus, note: str = "") -> list[Update]:
        entry = self.entries.get(index)
        if entry is None:
            return []
        entry.status, entry.note = status, note
        return [self.plan()]

    def _on_step_started(self, event: ev.StepStarted) -> list[Update]:
        said = say_text(f"**Step {event.index}: {event.title}**")
        return [*self._step(event.index, "in_progress"), said]

    def _on_step_preparing(self, event: ev.StepPreparing) -> list[Update]:
        """A later step prepared beside this one: still pending, said in its entry."""
        return self._step(event.step, "pending", "preparing")

    def _on_next_step_prepared(self, event: ev.NextStepPrepared) -> list[Update]:
        entry = self.entries.get(event.step)
        if entry is None or entry.status != "pending":
            return []  # its turn came already: its own status says more
        return self._step(event.step, "pending", "prepared" if event.ready else "")

    def _on_step_committed(self, event: ev.StepCommitted) -> list[Update]:
        done = self._close_proposal(event.step, "completed", f"committed {event.sha[:8]}")
        return [*done, *self._step(event.step, "completed"),
                say_text(f"Committed `{event.sha[:8]}` {event.title}.")]  # fmt: skip

    def _on_step_skipped(self, event: ev.StepSkipped) -> list[Update]:
        note = f"skipped: {event.reason}" if event.reason != "stop" else "stopped"
        closed = self._close_proposal(event.step, "failed", readable(note))
        return [*closed, *self._step(event.step, "completed", readable(note))]

    def _on_step_undone(self, event: ev.StepUndone) -> list[Update]:
        steps = self._step(event.step, "pending", "undone") if event.step is not None else []
        return [*steps, say_text(event.message)]

    # ----- the model's words

    def _on_model_call_started(self, event: ev.ModelCallStarted) -> list[Update]:
        self._prose = EditBlockFilter() if event.purpose in SHOWN_REPLIES else None
        return []

    def _on_token(self, event: ev.TokenStream) -> list[Update]:
        if self._prose is None or event.purpose not in SHOWN_REPLIES:
            return []
        return self._prose_text(self._prose.feed(event.text))

    def _on_model_exchange(self, event: ev.ModelExchange) -> list[Update]:
        if event.background or self._prose is None:
            return []
        text, self._prose = self._prose.finish(), None
        said = self._prose_text(text)
        # The reply ends as a paragraph: what is said next starts on its own.
        if self._said and not self._said.endswith("\n\n"):
            said += self._prose_text("\n" if self._said.endswith("\n") else "\n\n")
        self._said = ""
        return said

    def _prose_text(self, text: str) -> list[Update]:
        if not text or (not self._said and not text.strip()):
            return []  # no blank lines before a reply's first words
        self._said = (self._said + text)[-2:]
        return [update_agent_message_text(text)]

    def _on_usage(self, event: ev.UsageUpdated) -> list[Update]:
        """Tokens and cost against the budget: `used` is the tokens spent, `size` the token
        budget (--max-tokens), or without one the model's context window."""
        size = event.max_tokens or self.window()
        if not size or not self.reads_usage:
            return []
        used = event.prompt_tokens + event.completion_tokens
        cost = Cost(amount=event.usd, currency="USD") if event.usd is not None else None
        budget = {"maxTokens": event.max_tokens, "maxUsd": event.max_usd,
                  "estimated": event.estimated}  # fmt: skip
        return [UsageUpdate(session_update="usage_update", used=used, size=size, cost=cost,
                            field_meta={"tui-engineer": budget})]  # fmt: skip

    def _on_budget_warning(self, event: ev.BudgetWarning) -> list[Update]:
        return [say_text(readable(event.message))]

    def _on_feedback_delivered(self, event: ev.FeedbackDelivered) -> list[Update]:
        return [say_text(f"(Your message went to the model with its {event.purpose} call.)")]

    def _on_notice(self, event: ev.Notice) -> list[Update]:
        return [say_text(readable(event.message))]

    def _on_error(self, event: ev.ErrorEvent) -> list[Update]:
        return [say_text(f"Error: {readable(event.message)}")]

    def _on_stuck(self, event: ev.Stuck) -> list[Update]:
        return [say_text(f"Step {event.step}: {event.reason}")]

    def _on_server_paused(self, event: ev.ServerPaused) -> list[Update]:
        return [say_text(event.message)]

    def _on_baseline_failed(self, event: ev.BaselineFailed) -> list[Update]:
        return [say_text(event.message)]

    # ----- test runs: tool calls of kind execute

    def _new_id(self, kind: str) -> str:
        self._count += 1
        return f"{kind}-{self._count}"

    def _on_tests_started(self, event: ev.TestsStarted) -> list[Update]:
        call = self._new_id("tests")
        self._runs[(event.step, event.scope)] = call
        return [run_started(call, f"Tests ({event.scope}): {event.command}", event.command)]

    def _on_tests_finished(self, event: ev.TestsFinished) -> list[Update]:
        call = self._runs.pop((event.step, event.scope), None)
        if call is None:
            return []
        return [run_finished(call, event.ok, test_result_text(event))]

    def _on_check_finished(self, event: ev.CheckFinished) -> list[Update]:
        """One of the project's own checks on a step (its run is said once done: started and
        finished together)."""
        call = self._new_id("check")
        command = event.command or event.name
        text = event.summary or ("passed" if event.ok else "refused the step")
        if event.output:
            text += "\n\n```\n" + event.output.rstrip() + "\n```"
        started = run_started(call, f"Check: {event.name}", command)
        return [started, run_finished(call, event.ok, text)]

    def _on_baseline_started(self, event: ev.BaselineStarted) -> list[Update]:
        call = self._new_id("tests")
        self._runs[(None, "baseline")] = call
        title = f"Tests on the starting commit: {event.command}"
        return [run_started(call, title, event.command)]

    def _on_baseline_ready(self, event: ev.BaselineReady) -> list[Update]:
        text = event.summary or "recorded earlier for this same tree"
        if event.failing:
            text += "\nAlready failing before the session (not a step's to fix): " + ", ".join(
                event.failing
            )
        call = self._runs.pop((None, "baseline"), None)
        if call is None:  # recorded earlier: no run was started
            call = self._new_id("tests")
            return [
                run_started(call, f"Tests on the starting commit: {event.command}", event.command),
                run_finished(call, True, text),
            ]
        return [run_finished(call, True, text)]

    # ----- the MCP servers' tools, as the model calls them: tool calls of their kind

    def _on_tool_call_started(self, event: ev.ToolCallStarted) -> list[Update]:
        call = self._new_id("mcp")
        self._tools[event.call_id] = call
        title = f"{event.server}: {event.tool} (for the {event.purpose} call)"
        raw = {"server": event.server, "tool": event.tool, "arguments": event.arguments}
        return [start_tool_call(call, readable(title), kind=_tool_kind(event.kind),
                                status="in_progress", raw_input=raw)]  # fmt: skip

    def _on_tool_call_finished(self, event: ev.ToolCallFinished) -> list[Update]:
        call = self._tools.pop(event.call_id, None)
        if call is None:
            return []
        return [
            update_tool_call(
                call, status="completed" if event.ok else "failed",
                content=[tool_content(text_block(readable(event.result)))],
                raw_output={"ok": event.ok, "seconds": event.seconds},
            )
        ]  # fmt: skip

    # ----- proposals: tool calls of kind edit

    def _on_proposal_ready(self, event: ev.ProposalReady) -> list[Update]:
        call = self._new_id("step")
        self._proposals[event.step] = call
        if not event.diff.strip():
            return [self._keep(event.step, nothing_proposed(call, event))]
        diffs = [self._file_diff(status, path) for status, path in event.changes]
        summary = tool_content(text_block(proposal_text(event)))
        title = f"Step {event.step}: {event.title} ({event.summary})"
        return [
            self._keep(
                event.step,
                start_tool_call(
                    call,
                    readable(title),
                    kind="edit",
                    status="pending",
                    content=[*diffs, summary],
                    locations=hunk_locations(self.root, event),
                    raw_input={
                        "step": event.step,
                        "diff": event.diff,
                        "written_by_tests": [path for _, path in event.written_by_tests],
                    },
                ),
            )
        ]

    def _keep(self, step: int, shown: ToolCallStart) -> ToolCallStart:
        self._shown[step] = shown
        return shown

    def proposal_call(self, step: int) -> str | None:
        return self._proposals.get(step)

    def asked_about(self, step: int, question: str) -> ToolCallUpdate | None:
        """Step `step`'s proposal as a permission request carries it: its kind, diffs, test
        result and locations, so a client that shows the request alone shows what is asked."""
        shown = self._shown.get(step)
        if shown is None or self._proposals.get(step) != shown.tool_call_id:
            return None
        return ToolCallUpdate(
            tool_call_id=shown.tool_call_id, title=question, kind=shown.kind, status="pending",
            content=shown.content, locations=shown.locations, raw_input=shown.raw_input,
        )  # fmt: skip

    def _file_diff(self, status: str, path: str) -> object:
        shadow = self.shadow()
        old = None if status == "A" else read_file(self.root / path)
        new = read_file(shadow / path) if shadow is not None and status != "D" else None
        return tool_diff_content(str(self.root / path), new or "", old)

    def _on_decision(self, event: ev.DecisionMade) -> list[Update]:
        if event.decision == "accept":
            return [say_text(f"Step {event.step} accepted: {event.by}.")]
        word = {"reject": "rejected", "skip": "skipped", "stop": "stopped"}.get(event.decision)
        if word is None:
            return []
        said = f"{word}: {event.reason}" if event.reason else word
        return self._close_proposal(event.step, "failed", readable(said))

    def _on_accept_refused(self, event: ev.AcceptRefused) -> list[Update]:
        """Nothing committed: this tool call ends; the proposal is shown again as a new one."""
        said = readable(event.message)
        return [*self._close_proposal(event.step, "failed", said), say_text(said)]

    def cut_off(self, why: str) -> list[Update]:
        """Close every tool call still open (a run or a review cut off by a stop)."""
        calls = [*self._runs.values(), *self._proposals.values(), *self._tools.values()]
        self._tools.clear()
        self._runs.clear()
        self._proposals.clear()
        self._shown.clear()
        return [update_tool_call(c, status="failed", raw_output={"result": why}) for c in calls]

    def _close_proposal(self, step: int, status: str, said: str) -> list[Update]:
        call = self._proposals.pop(step, None)
        self._shown.pop(step, None)
        if call is None:
            return []
        return [update_tool_call(call, status=status, content=None, raw_output={"result": said})]


def _tool_kind(kind: str) -> ToolKind:
    return kind if kind in ("read", "fetch", "search", "execute") else "other"  # type: ignore[return-value]


def titled(request: str) -> Update:
    """The session's title in the editor's list of threads: the request's first line."""
    line = readable(request).strip().splitlines()[0] if request.strip() else "tui-engineer"
    return SessionInfoUpdate(
        session_update="session_info_update", title=line if len(line) <= 80 else line[:79] + "…"
    )


def say_text(text: str) -> Update:
    return update_agent_message_text(text.rstrip("\n") + "\n\n")


def user_said(text: str) -> Update:
    return update_user_message_text(text)
