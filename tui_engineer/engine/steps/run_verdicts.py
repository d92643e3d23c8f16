"""What a step's test run means for its loop, read off the report: the same failure as the run
before (the loop is stuck), or a run the test timeout stopped (the change kept, the human told,
never sent to the model)."""

from __future__ import annotations

import re

from tui_engineer.verify import TestReport

_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+(\.\d+)?s\b")


def _stable(text: str) -> str:
    """Drop what differs between two runs of the same failure (object addresses, timings)."""
    return _VOLATILE.sub("#", text)


def failure_signature(report: TestReport) -> tuple[object, ...]:
    """What makes two failing runs 'the same failure' for stuck detection."""
    if report.structured:
        return tuple(sorted((f.test_id, _stable(f.message)) for f in report.failures))
    tail = report.output_tail.strip().splitlines()[-5:]
    return (report.exit_code, report.timed_out, tuple(_stable(line) for line in tail))


TIMED_OUT = "not verified: the tests ran out of time"


def timed_out_note(report: TestReport, timeout: float) -> str:
    """What the human reads when the step's run was stopped by the test timeout."""
    return (
        f"{TIMED_OUT} ({report.summary()}, the test_timeout of {timeout:g}s), so the change "
        "is kept as it is and not sent to the model as a failure. To wait longer, raise "
        "test_timeout (--test-timeout, TUI_ENGINEER_TEST_TIMEOUT or test_timeout in "
        ".tui-engineer.toml); to run fewer tests, narrow test_command (--test-cmd); or "
        "accept the step untested."
    )
