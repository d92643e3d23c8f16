"""What a runner module provides (verify/runners/): recognise its command, make the command
that runs it with everything it needs to be read test by test, and read what it printed. The
registry (verify/runners/__init__.py) asks each module in turn; a command no module claims runs
as written and is read by its output alone (verify/runner_output.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from tui_engineer.verify.runner_result import RunnerResult


class Runner(Protocol):
    name: str  # what the user reads: "unittest", "cargo test"

    def claims(self, command: str) -> bool:
        """Is `command` this runner's (a simple command running it)?"""
        ...

    def report_command(self, command: str) -> str:
        """`command` as it is run, so that its output can be read test by test."""
        ...

    def read(self, output: str, root: Path | None) -> RunnerResult | None:
        """The result `output` shows, or None when it is not this runner's."""
        ...
