"""The human's review: the proposal shown, the decision, and what it made of the repository (a
commit, an undo, a refusal, a skip)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


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
