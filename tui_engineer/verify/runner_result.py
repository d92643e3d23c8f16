"""What a test runner's output says, as data: the counts and the failing tests that every
runner module (verify/runners/) returns, and the helpers they share."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MESSAGE_CHARS = 500
TRACEBACK_LINES = 40
WORKSPACE_PREFIX = "/workspace/"  # the docker sandbox's copy of the shadow


@dataclass
class Failure:
    test_id: str
    message: str
    traceback: str


@dataclass
class RunnerResult:
    runner: str  # "cargo", "node", "go", "jest", "catch2", "unittest"
    passed: int = 0
    failed: int = 0
    errors: int = 0  # a build that failed (go), a test file that could not load (jest)
    skipped: int = 0
    failures: list[Failure] = field(default_factory=list)
    passing: list[str] = field(default_factory=list)  # ids of passed tests, where printed


def trim_lines(lines: list[str]) -> str:
    if len(lines) <= TRACEBACK_LINES:
        return "\n".join(lines).strip("\n")
    dropped = len(lines) - TRACEBACK_LINES
    return "\n".join([f"[... {dropped} earlier lines trimmed ...]", *lines[-TRACEBACK_LINES:]])


def relative(path: str, root: Path | None) -> str:
    """A path the runner printed, relative to the project when it is inside it."""
    if root is not None and path.startswith(str(root) + "/"):
        return path[len(str(root)) + 1 :]
    return path.removeprefix(WORKSPACE_PREFIX)
