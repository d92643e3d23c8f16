"""The interface every sandbox implements, so the engine does not care where tests run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from tui_engineer.verify.report import TestReport


@runtime_checkable
class Sandbox(Protocol):
    name: str
    # Every process a run starts has ended when `run_tests` returns (its own PID namespace):
    # none is left holding a memory map it could still write through unheard, so the staging
    # after a run can trust the shadow's watch (base/staging.py).
    ends_every_process: bool

    async def run_tests(
        self,
        workdir: Path,
        command: str,
        *,
        timeout: float,
        on_output: Callable[[str], None] | None = None,
    ) -> TestReport:
        """Run `command` (a shell string) with `workdir` as the project. Output lines go to
        `on_output` as they arrive. Raises CommandNotFound when the command's program is missing."""
        ...

    async def close(self) -> None:
        """Release what the sandbox holds (containers, temp folders). Safe to call twice."""
        ...
