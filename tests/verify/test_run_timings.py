"""Whether narrowing to the affected tests pays (verify/run_timings.py), from the times a
repository's real runs took: one run on a loaded machine does not flip the rule back."""

from __future__ import annotations

from pathlib import Path

from tui_engineer.verify.report import TestReport
from tui_engineer.verify.run_timings import RECENT_FULL_RUNS, RunTimings


def ran(seconds: float) -> TestReport:
    return TestReport("python -m pytest", 0, seconds, False, passed=3, structured=True)


def test_one_slow_full_run_does_not_make_narrowing_pay_again(tmp_path: Path) -> None:
    timings = RunTimings(tmp_path / "suite.json")
    timings.keep("full", ran(10.0))
    timings.keep("affected", ran(6.0))  # testmon's own start-up: more than half the suite
    assert timings.narrowing_costs() == (6.0, 10.0)
    timings.keep("full", ran(14.0))  # the same suite while the machine was busy
    assert timings.narrowing_costs() == (6.0, 10.0)  # still not worth narrowing


def test_a_suite_grown_slower_narrows_again_within_its_recent_runs(tmp_path: Path) -> None:
    timings = RunTimings(tmp_path / "suite.json")
    timings.keep("full", ran(10.0))
    timings.keep("affected", ran(6.0))
    for _ in range(RECENT_FULL_RUNS):
        timings.keep("full", ran(14.0))  # twice the narrowed run's floor, every time now
    assert timings.narrowing_costs() is None
    assert timings.full_seconds() == 14.0


def test_a_run_cut_short_says_nothing_of_the_suites_time(tmp_path: Path) -> None:
    timings = RunTimings(tmp_path / "suite.json")
    timings.keep("full", ran(10.0))
    timings.keep("full", TestReport("python -m pytest", None, 2.0, True, structured=True))
    assert timings.full_seconds() == 10.0
