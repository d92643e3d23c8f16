"""What a runner module provides (verify/runners/). The registry (verify/runners/__init__.py)
asks each module in turn; a command no module claims runs as written, is read by its output
alone (every module's `read`) and always runs whole.

A module is the runner's whole story, so that adding a runner is one file and a registry line:
- detect: `claims` (is this command mine?), with the project's root for a command whose runner
  the project decides (`npm test` runs jest or node --test as package.json says);
- build the command: `report_command`, with what it needs to be read test by test (unittest's
  and go's -v, cargo's --no-fail-fast, a report file outside the worktree for pytest and jest);
- read the result: `read` (its printed output) and `read_report` (the report file it wrote);
- narrow: `narrows` (can this command be narrowed?) and `narrowed` (the command running only
  what a change can affect, or None: run it whole);
- test-first selection: `files_command` (the command running only a step's new test files);
- `started`: a line of its output that shows the suite got as far as a test's result;
  `start_problem`: its signs that a run on the starting commit never got to the tests;
  `old_lines`: the lines of its output about old failures, which the model is not shown."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol

from tui_engineer.verify.runner_result import RunnerResult


class RunReport(Protocol):
    """What a runner reads of a finished run's report (verify/report.py's TestReport, which
    imports the runners: named here so that they need not import it back)."""

    command: str
    exit_code: int | None
    structured: bool
    passed: int
    failed: int
    errors: int
    skipped: int
    output_tail: str

    @property
    def failures(self) -> Sequence[object]: ...

    @property
    def passing(self) -> Sequence[str]: ...


class Runner(Protocol):
    name: str  # what the user reads: "unittest", "cargo test"

    def claims(self, command: str, root: Path | None = None) -> bool:
        """Is `command` this runner's (a simple command running it)?"""
        ...

    def report_command(
        self, command: str, report: Path | None = None, root: Path | None = None
    ) -> str:
        """`command` as it is run, so that its results can be read test by test; `report`: a
        file outside the worktree it may write its report to."""
        ...

    def read(self, output: str, root: Path | None) -> RunnerResult | None:
        """The result `output` shows, or None when it is not this runner's."""
        ...

    def read_report(self, report: Path, root: Path | None) -> RunnerResult | None:
        """The result in the report file the run wrote, or None (none written, or not one)."""
        ...

    def narrows(self, command: str, root: Path | None) -> bool:
        """Can this command be narrowed to the tests a change affects?"""
        ...

    def narrowed(
        self, command: str, changed: Iterable[str], root: Path, files: Callable[..., list[str]]
    ) -> str | None:
        """`command` running only the tests `changed` can affect, or None (run it whole).
        `files()`: the worktree's files, for a runner that picks test files among them;
        `files(*pathspecs)`: those git's pathspecs match (test files alone: fewer to list)."""
        ...

    def files_command(self, command: str, root: Path, files: Iterable[str]) -> str | None:
        """`command` running only the test files `files`, or None (it cannot: run it whole)."""
        ...

    def started(self, line: str) -> bool:
        """Does this output line (stripped) show a test's result: the suite has started?"""
        ...

    def old_lines(self, lines: list[str], ids: set[str]) -> set[int]:
        """The indices of the output `lines` that speak of the tests `ids` (failures older
        than the session), left out of what the model reads of a run."""
        ...

    def start_problem(self, report: RunReport) -> str | None:
        """Why this run on the starting commit shows the runner did not get to run the tests
        (its own signs: pytest's usage error, unittest finding none), else None."""
        ...


# What most runners share (a module names them: `start_problem = no_start_problem`).


def shows_a_result(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    """A runner's `started`: is the (stripped) line one of `pattern`'s, a test's result?"""

    def started(line: str) -> bool:
        return pattern.fullmatch(line) is not None

    return started


def no_start_problem(_report: RunReport) -> str | None:
    """For a runner whose failed start shows in its exit code and output (verify/baseline.py)."""
    return None


def no_old_lines(_lines: list[str], _ids: set[str]) -> set[int]:
    """For a runner whose output is shown whole (the old failures are named apart)."""
    return set()
