"""What the engine asks the human: the Reviewer protocol and the values that cross it.

The TUI implements Reviewer with screens; headless implements it as a policy or terminal prompts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from tui_engineer.base.names import readable

if TYPE_CHECKING:
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.steps.test_first import BeforeRun
    from tui_engineer.verify import TestReport

# "undo": take back the last accepted step; the proposal under review, built on it, is dropped
# and its step proposed again on the new HEAD (engine/session.py).
# "edited": the human changed the proposal by hand in its shadow (engine/reviews/hand_edits.py): it
# is
# tested again and reviewed again.
# "retest": test the proposal again as it is, with more time or fewer tests (the test run was
# cut by test_timeout: engine/reviews/retest.py); it is reviewed again.
DecisionKind = Literal[
    "accept", "reject", "skip", "edit_plan", "stop", "undo", "edited", "retest"
]  # fmt: skip
# What every review of a session without a test command says instead of a test result.
UNVERIFIED = "unverified: no tests ran"
BY_YOU = "by you"
# How every front end names the files a step's test runs wrote (vcs/written.py).
WRITTEN_BY_TESTS = "written by the tests"
_WRITTEN_HOW = {"A": "new", "M": "changed", "D": "deleted"}


def written_line(written: Sequence[tuple[str, str]], note: str = ", not committed") -> str:
    """The files a step's test runs wrote, in one line: "written by the tests, not committed:
    coverage.dat (new), Cargo.lock (changed)", the names shown readably."""
    files = ", ".join(f"{readable(path)} ({_WRITTEN_HOW.get(status, status)})"
                      for status, path in written)  # fmt: skip
    return f"{WRITTEN_BY_TESTS}{note}: {files}"


# A test red at the start that the step's change runs through (engine/steps/reach.py), still red.
STILL_FAILING = "Still failing, and your change runs through it (it failed before this session too)"


def tests_result(tests_ok: bool, summary: str, disowned: Sequence[tuple[str, str]] = ()) -> str:
    """A proposal's result in a few words: "tests pass", "tests pass but for test_add (not this
    step's, says the model)", or "tests: <summary>" when they fail."""
    if not tests_ok:
        return f"tests: {summary}"
    if not disowned:
        return "tests pass"
    names = ", ".join(i.rsplit("::", 1)[-1] for i, _ in disowned[:3])
    return f"tests pass but for {names} (not this step's, says the model)"


def old_failure_lines(
    fixed: Sequence[str],
    still: Sequence[str],
    old: Sequence[str],
    disowned: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """What a review says of the tests red on the starting commit, a sentence each: those the
    step fixed, those its change runs through that still fail (with the model's reason when it
    said one is not the step's: edits/disown.py), and the rest (not the step's)."""

    def ids(these: Sequence[str]) -> str:
        return ", ".join(these[:3]) + (" …" if len(these) > 3 else "")

    reasons = dict(disowned)
    lines = []
    if fixed:
        lines.append(f"Now passes (failed before this session): {ids(fixed)}")
    owned = [i for i in still if i not in reasons]
    if owned:
        lines.append(f"{STILL_FAILING}: {ids(owned)}")
    for test_id, why in reasons.items():
        lines.append(
            f"{STILL_FAILING}: {test_id}. Not this step's, says the model: "
            f"{why or '(no reason given)'}"
        )
    rest = [i for i in old if i not in still]  # those reached are said once, above
    if rest:
        lines.append(f"{len(rest)} failing before this session: {ids(rest)} (not this step's)")
    return lines


@dataclass(frozen=True)
class DroppedHunk:
    """A hunk the human leaves out of an accepted step (engine/reviews/hunks.py names hunks)."""

    path: str
    index: int  # the hunk's position in its file (engine.hunks.WHOLE_FILE: a file without hunks)
    text: str = ""  # the hunk as the diff shows it, for the model
    reason: str = ""


@dataclass(frozen=True)
class LineComment:
    """A review comment on one line of the diff."""

    path: str
    line: int  # the line's number in the new file (in the old one for a removed line)
    text: str
    code: str = ""  # the line commented on, as the diff shows it

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Proposal:
    step: Step
    plan: list[Step]
    diff: str
    report: TestReport | None  # None when the step changed nothing to test
    attempts: int
    notes: list[str] = field(default_factory=list)  # e.g. "stuck: the same failure twice"
    actions: list[str] = field(default_factory=list)  # sandbox actions run, e.g. "install requests"
    test_runs: tuple[str, ...] = ()  # the last attempt's runs: "affected: …", "full: …"
    before: BeforeRun | None = None  # a test-first step: its new tests on the old code
    unverified: bool = False  # a session without a test command: no tests ran
    # A kept subset of the hunks that was tested (engine/reviews/partial.py): "partial: 3 of 5
    # hunks,
    # tests re-run", and the hunks left out (shown dimmed while the review goes on).
    partial: str = ""
    dropped: tuple[DroppedHunk, ...] = ()
    edited: bool = False  # the human edited it by hand (engine/reviews/hand_edits.py)
    # Files the test runs wrote, as (status letter, path), and their diff (vcs/written.py): not
    # in `diff`, shown apart, committed only when the human keeps them (Decision.kept_written).
    written: tuple[tuple[str, str], ...] = ()
    written_diff: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float | None = None
    # The plan check found the step no longer needed, and why (engine/plans/plan_check.py): this is
    # no change but a proposal to drop the step, which an accept carries out.
    not_needed: str = ""

    @property
    def tests_ok(self) -> bool:
        """The tests pass, and a test-first step's new test failed on the old code."""
        failed_first = self.before is None or not self.before.problem
        return self.report is not None and self.report.ok and failed_first

    def old_failures(self) -> tuple[str, ...]:
        """Tests failing in this proposal's run that failed on the starting commit too."""
        return tuple(f.test_id for f in self.report.old) if self.report is not None else ()

    def summary(self) -> str:
        """One line for the review: the test result, and what a test-first check found."""
        if self.not_needed:
            return (
                f"no longer needed, says the plan check ({self.not_needed}): accept to drop "
                "this step, or reject it with a reason to have it proposed"
            )
        if self.partial:
            return f"{self.partial}: {self._result()}"
        return self._result()

    def _result(self) -> str:
        if self.unverified:
            return UNVERIFIED
        if self.report is None:
            return self.before.problem if self.before is not None else "no tests run"
        if self.before is not None and self.before.problem:
            return f"{self.before.problem}; after the change: {self.report.summary()}"
        return self.report.summary()


@dataclass
class Decision:
    kind: DecisionKind
    reason: str = ""
    new_steps: list[Step] | None = None  # for edit_plan: replaces the remaining steps
    # Who decided, for the run record and an accepted step's commit ("Accepted: by you").
    by: str = BY_YOU
    dropped: tuple[DroppedHunk, ...] = ()  # accept: hunks left out (the kept ones are tested)
    comments: tuple[LineComment, ...] = ()  # accept or reject: review comments on lines
    kept_written: tuple[str, ...] = ()  # accept: files the tests wrote that go in too
    # retest: the session's test_timeout from now on (seconds), or its test command (fewer tests)
    test_timeout: float | None = None
    test_command: str | None = None

    @classmethod
    def accept(cls, by: str = BY_YOU) -> Decision:
        return cls("accept", by=by)

    @classmethod
    def reject(cls, reason: str) -> Decision:
        return cls("reject", reason)


@dataclass
class Verdict:
    ran: bool
    worked: bool
    perfect: bool
    comment: str = ""


class Reviewer(Protocol):
    async def review(self, proposal: Proposal) -> Decision:
        """Decide on a step's proposal (shown after its tests ran)."""
        ...

    async def still_wrong(self) -> str | None:
        """Ask "what is still wrong?" after the last step. None or empty means done."""
        ...

    async def verdict(self) -> Verdict | None:
        """Ask for the session's verdict at the end; None to skip."""
        ...
