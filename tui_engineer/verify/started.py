"""Has a test run got as far as running tests? A line of its output that shows a test's result
says so, for each runner we read (each module's `started`, verify/runners/): the check the first
propose call waits for, so that a suite that cannot start (a program missing, a conftest that
does not import, a crate that does not build) stops the session before any model call is paid
for."""

from __future__ import annotations

from tui_engineer.verify.runners import RUNNERS


def shows_a_test_ran(line: str) -> bool:
    """Does this output line show that the runner got as far as a test's result?"""
    stripped = line.strip()
    return bool(stripped) and any(runner.started(stripped) for runner in RUNNERS)
