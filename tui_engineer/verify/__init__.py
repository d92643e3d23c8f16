"""Test verification: run the target repo's test command safely and read what it reported."""

from tui_engineer.verify.report import FailingTest, TestReport, report_from_run
from tui_engineer.verify.test_process import CommandNotFound, RunResult, run_command, scrubbed_env

__all__ = [
    "CommandNotFound",
    "FailingTest",
    "RunResult",
    "TestReport",
    "report_from_run",
    "run_command",
    "scrubbed_env",
]
