"""A test runner that crashed, not tests that failed: a run with no report test by test whose
output ends with an uncaught Python exception raised outside the project's tests (Django's
parallel runner dying with `TypeError: cannot pickle 'traceback' object` when tblib is missing).
On the starting commit that is a start problem, named in the runner's own words: taken for
failing tests, every step would be judged by an exit code that no edit can change."""

from __future__ import annotations

import re
from typing import Protocol

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+')
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?(?P<name>[A-Z]\w*(?:Error|Exception))(?::|$)")
_TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|tests?)\.py$")
# What a user does about a crash whose cause is known.
_HINTS = {
    "cannot pickle 'traceback' object": (
        "its parallel workers cannot send a failure's traceback back: install tblib in the "
        "project's environment, or run it with one process (Django: --parallel 1)"
    ),
}


class _Run(Protocol):
    exit_code: int | None
    structured: bool
    output_tail: str


def runner_crash(report: _Run) -> str | None:
    """'its runner crashed: `TypeError: …`', or None (not a crash of the runner)."""
    if report.structured or not report.exit_code or report.exit_code < 0:
        return None
    lines = [line for line in report.output_tail.splitlines() if line.strip()]
    if "Traceback (most recent call last):" not in report.output_tail or not lines:
        return None
    last = lines[-1].strip()
    found = _EXCEPTION.match(last)
    frames = [m.group("path") for line in lines if (m := _FRAME.match(line))]
    if found is None or found.group("name") == "AssertionError" or not frames:
        return None
    if any(_TEST_FILE.search(path) for path in frames) or not _installed(frames[-1]):
        return None  # a test's own failure, or the project's code raising: the baseline's
    hint = next((f"; {why}" for said, why in _HINTS.items() if said in last), "")
    return f"its runner crashed before reporting its tests: `{last}`{hint}"


def _installed(path: str) -> bool:
    """Is this frame's file Python's own or an installed package's (not the project's code)?"""
    return path.startswith("<") or "/lib/python" in path
