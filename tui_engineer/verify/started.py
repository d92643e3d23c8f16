"""Has a test run got as far as running tests? A line of its output that shows a test's result
says so, for each runner we read: the check the first propose call waits for, so that a suite
that cannot start (a program missing, a conftest that does not import, a crate that does not
build) stops the session before any model call is paid for."""

from __future__ import annotations

import re

_RESULT_LINE = re.compile(
    r"^(?:"
    r"[.FEsxX]+\s*(?:\[\s*\d+%\])?"  # pytest -q's progress, unittest's dots
    r"|\S+::\S+ (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*"  # pytest -v
    r"|running \d+ tests?"  # cargo test, per binary
    r"|test \S+ \.\.\. (?:ok|FAILED|ignored)"  # cargo test
    r"|(?:not )?ok \d+ .*"  # TAP: node --test (older), tap runners
    r"|[✔✖✓✗] .*"  # node --test's spec reporter, jest
    r"|(?:PASS|FAIL) \S+.*"  # jest's per-file line
    r"|=== RUN .*|--- (?:PASS|FAIL|SKIP): .*"  # go test -v
    r"|ok\s+\S+\s+[\d.]+s.*|FAIL\s+\S+\s+[\d.]+s.*"  # go test
    r"|\{\"Time\".*\"Action\".*"  # go test -json
    r"|Ran \d+ tests? in .*"  # unittest
    r")\s*$"
)


def shows_a_test_ran(line: str) -> bool:
    """Does this output line show that the runner got as far as a test's result?"""
    stripped = line.strip()
    return bool(stripped) and bool(_RESULT_LINE.match(stripped))
