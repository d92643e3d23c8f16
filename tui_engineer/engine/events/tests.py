"""Verification: the test runs of a step and the project's own checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


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
