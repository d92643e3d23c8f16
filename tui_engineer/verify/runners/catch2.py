"""Catch2's console report (C++: Exercism's C++ track, and any CMake project whose build runs a
Catch2 test program): its summary line and the block it prints for each failing test case.

    -------------------------------------------------------------------------------
    test case name
    -------------------------------------------------------------------------------
    /path/x_test.cpp:8
    ...............................................................................

    /path/x_test.cpp:9: FAILED:
      REQUIRE( a == b )
    with expansion:
      1 == 2

    ===============================================================================
    test cases: 50 | 10 passed | 40 failed
    (or, when none failed: All tests passed (50 assertions in 50 test cases))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from tui_engineer.verify.runner_result import (
    MESSAGE_CHARS,
    Failure,
    RunnerResult,
    relative,
    trim_lines,
)
from tui_engineer.verify.runners.base import no_old_lines, no_start_problem

_ALL_PASSED = re.compile(r"^All tests passed \(\d+ assertions? in (\d+) test cases?\)", re.M)
_CASES = re.compile(r"^test cases: *(\d+)((?: \| \d+ \w+(?: \w+)?)*)$", re.M)
_PART = re.compile(r"(\d+) (passed|failed|skipped)")
_RULE = "-" * 79
_DOTS = "." * 79
_LOCATION = re.compile(r"^(.+?):\d+: FAILED:$")


def read(output: str, root: Path | None) -> RunnerResult | None:
    passed = [int(n) for n in _ALL_PASSED.findall(output)]
    summaries = _CASES.findall(output)
    if not passed and not summaries:
        return None
    result = RunnerResult("catch2", passed=sum(passed))
    for _total, parts in summaries:
        counts = {kind: int(n) for n, kind in _PART.findall(parts)}
        result.passed += counts.get("passed", 0)
        result.failed += counts.get("failed", 0)
        result.skipped += counts.get("skipped", 0)
    result.failures = _failures(output.splitlines(), root)
    return result


def _failures(lines: list[str], root: Path | None) -> list[Failure]:
    """One per `---- name ----` block that holds a FAILED line."""
    found = []
    for index in range(len(lines) - 2):
        if lines[index] != _RULE or lines[index + 2] != _RULE or lines[index + 1] == _RULE:
            continue
        body = _block(lines, index + 3)
        failed = next((m for m in map(_LOCATION.match, body) if m), None)
        if failed is None:
            continue
        file = relative(failed.group(1), root)
        at = body.index(failed.group(0))
        message = next((ln.strip() for ln in body[at + 1 :] if ln.strip()), "")
        found.append(
            Failure(f"{file}::{lines[index + 1]}", message[:MESSAGE_CHARS], trim_lines(body))
        )
    return found


def _block(lines: list[str], start: int) -> list[str]:
    """A failing test's lines: from after its header to the next block or the summary."""
    body = []
    for line in lines[start:]:
        if line == _RULE or line.startswith("====="):
            break
        if line != _DOTS:
            body.append(line)
    return body


# Catch2 has no command of its own (a CMake or make target runs the test program): it is read
# from whatever command printed its report, never claimed, narrowed or given arguments.
name = "Catch2"


def claims(_command: str, _root: Path | None = None) -> bool:
    return False


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    return command


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None


def narrows(_command: str, _root: Path | None) -> bool:
    return False


def narrowed(
    _command: str, _changed: Iterable[str], _root: Path, _files: Callable[..., list[str]]
) -> str | None:
    return None


def files_command(_command: str, _root: Path, _files: Iterable[str]) -> str | None:
    return None


def started(_line: str) -> bool:
    return False  # its report comes at the end: the command's own lines show it started


start_problem = no_start_problem
old_lines = no_old_lines
