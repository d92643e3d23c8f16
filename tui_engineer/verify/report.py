"""What a test run produced, in a form the engine, the UI and the model can use: counts, failing
test ids, trimmed tracebacks and the tail of the output. For pytest the counts come from its JUnit
XML report; for the other runners from their output or report file (one module each:
verify/runners/); any other command is judged by its exit code and output tail alone."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tui_engineer.base.escapes import without_escapes
from tui_engineer.verify import runners
from tui_engineer.verify.runner_result import RunnerResult
from tui_engineer.verify.runners import pytest
from tui_engineer.verify.test_process import RunResult

TRACEBACK_LINES = 40
TAIL_LINES = 80
MESSAGE_CHARS = 500
_MAX_IDS_FOR_MODEL = 30


@dataclass
class FailingTest:
    test_id: str  # e.g. "tests/test_calc.py::test_add" (a module path for collection errors)
    message: str  # the one-line reason, e.g. "assert 5 == 6"
    traceback: str  # trimmed to the last lines, always keeping the `E   ...` assertion lines


@dataclass
class TestReport:
    __test__ = False  # not a pytest test class, despite the name

    command: str
    exit_code: int | None  # None when killed on timeout; negative: killed by that signal
    duration: float
    timed_out: bool
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[FailingTest] = field(default_factory=list)
    output_tail: str = ""  # last TAIL_LINES lines of combined stdout+stderr
    structured: bool = False  # True when the counts came from a report (JUnit XML, a runner's)
    note: str = ""  # why a report is less detailed than expected (e.g. no JUnit XML written)
    # Ids of the tests that passed (a structured report): what a baseline compares by.
    passing: list[str] = field(default_factory=list)
    # Failures of tests that already failed on the starting commit (verify/baseline.py): taken
    # out of `failures`, shown apart, not the step's to fix. Counted in `failed`/`errors`.
    old: list[FailingTest] = field(default_factory=list)
    # Ids of tests red on the starting commit that pass in this run: the step fixed them.
    fixed: list[str] = field(default_factory=list)
    # Old failures this step's change runs through (engine/steps/reach.py) that still fail: the
    # step's to fix (in `failures`), or disowned by the model (in `old`, with its reason).
    reached: list[str] = field(default_factory=list)
    # {id: the model's reason} for the reached old failures it said are not the step's
    # (edits/disown.py): shown with the reason, never as "tests passed".
    disowned: dict[str, str] = field(default_factory=dict)
    # {id: how the change runs through it} for the reached ones (engine/steps/reach.py), for the
    # human.
    reach_why: dict[str, str] = field(default_factory=dict)
    # Said in place of the counts by a report that is not a test run's: the project's own
    # checks' findings (engine/steps/project_checks.py), "ruff check: 1 new finding".
    said: str = ""

    @property
    def ok(self) -> bool:
        if self.timed_out or self.exit_code is None or self.exit_code < 0:
            return False
        if self.exit_code == 0:
            return self.failed == 0 and self.errors == 0
        # Red only with failures that were red before this session: the step broke nothing.
        return self.structured and bool(self.old) and not self.failures

    def summary(self) -> str:
        """One line: '3 passed, 1 failed in 2.1s', 'timed out after 300s', 'exit code 2 in 0.3s'."""
        if self.timed_out:
            return f"timed out after {_seconds(self.duration)}"
        if self.exit_code is not None and self.exit_code < 0:
            return f"killed by signal {-self.exit_code} after {_seconds(self.duration)}"
        if self.said:
            return f"{self.said} in {_seconds(self.duration)}"
        if not self.structured:
            return f"exit code {self.exit_code} in {_seconds(self.duration)}"
        counts = [
            f"{n} {label}"
            for n, label in (
                (self.passed, "passed"),
                (self.failed, "failed"),
                (self.errors, "errors" if self.errors != 1 else "error"),
                (self.skipped, "skipped"),
            )
            if n
        ]
        text = f"{', '.join(counts) or 'no tests ran'} in {_seconds(self.duration)}"
        if self.fixed:
            text += f" (now passes: {_listed(self.fixed)})"
        owned = [i for i in self.reached if i not in self.disowned]
        if owned:
            text += f" (still failing, and the change runs through it: {_listed(owned)})"
        if self.disowned:
            disowned = _listed(list(self.disowned))
            text += f" (still failing, not this step's says the model: {disowned})"
        if self.old:
            text += f" ({len(self.old)} failing before this session)"
        if self.exit_code != 0 and not (self.failed or self.errors):
            text += f" (exit code {self.exit_code})"
        return text

    def for_model(self, max_chars: int = 6000) -> str:
        """The run trimmed for a diagnosis prompt: result, failing ids, tracebacks, output tail."""
        head = [f"Test command: {self.command}", f"Result: {self.summary()}"]
        if self.note:
            head.append(f"Note: {self.note}")
        if self.failures:
            head.append("Failing tests:")
            shown = self.failures[:_MAX_IDS_FOR_MODEL]
            head += [f"- {f.test_id}: {_first_line(f.message)}" for f in shown]
            if len(self.failures) > len(shown):
                head.append(f"- ... and {len(self.failures) - len(shown)} more")
        text = "\n".join(head) + "\n"
        # Tracebacks get most of what is left; the output tail what remains after them.
        budget = max_chars - len(text)
        details = _tracebacks_within(self.failures, int(budget * 0.75) if self.structured else 0)
        text += details
        tail_budget = max_chars - len(text) - len("\nOutput (last lines):\n")
        tail = _without_old(self.output_tail, self.old)
        if tail and tail_budget > 200:
            text += "\nOutput (last lines):\n" + _keep_end(tail, tail_budget)
        return text[:max_chars]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        data["summary"] = self.summary()
        return data


def _listed(ids: list[str], shown: int = 3) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _without_old(tail: str, old: list[FailingTest]) -> str:
    """The output without what it says about failures that predate the session (each runner
    knows its own: pytest's section of each and its summary line, unittest's block and `-v`
    line). The model is not asked about them; they are shown to the user apart."""
    if not old:
        return tail
    ids = {f.test_id for f in old}
    lines = tail.splitlines()
    dropped: set[int] = set()
    for runner in runners.RUNNERS:
        dropped |= runner.old_lines(lines, ids)
    return "\n".join(line for index, line in enumerate(lines) if index not in dropped)


def _seconds(value: float) -> str:
    return f"{value:.0f}s" if value >= 10 else f"{value:.1f}s"


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _keep_end(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[len(text) - limit :]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < len(cut) // 2 else cut


def _tracebacks_within(failures: list[FailingTest], budget: int) -> str:
    parts: list[str] = []
    used = 0
    for index, failure in enumerate(failures):
        block = f"\n--- {failure.test_id}\n{failure.traceback.rstrip()}\n"
        if used + len(block) > budget:
            parts.append(f"\n(tracebacks of {len(failures) - index} more failures omitted)\n")
            break
        parts.append(block)
        used += len(block)
    return "".join(parts)


def tail_lines(text: str, count: int = TAIL_LINES) -> str:
    lines = text.rstrip("\n").splitlines()
    return "\n".join(lines[-count:])


def report_from_run(
    command: str, run: RunResult, junit_path: Path | None = None, root: Path | None = None
) -> TestReport:
    """Build the report for `command` (as the user wrote it). With `junit_path` (a pytest run),
    counts come from the XML; if pytest wrote none or a broken one, fall back to exit code + tail
    and say why in `note`."""
    output = without_escapes(run.output)  # a runner asked for colour: none in tails or prompts
    report = TestReport(
        command=command,
        exit_code=run.exit_code,
        duration=run.duration,
        timed_out=run.timed_out,
        output_tail=tail_lines(output),
    )
    if junit_path is None:
        if not run.timed_out:
            _read_runner_output(report, output, root)
        return report
    if run.timed_out:
        report.note = "pytest was stopped by the timeout before writing its report."
        return report
    try:
        parsed = pytest.parse_junit_xml(junit_path, root)
    except FileNotFoundError:
        report.note = (
            "pytest wrote no JUnit report (it probably failed before collecting tests, e.g. a "
            "bad option or a crash in conftest.py); judge by the output below."
        )
        return report
    except (ET.ParseError, OSError) as err:
        report.note = f"pytest's JUnit report could not be read ({err}); judge by the output."
        return report
    apply_runner_result(report, parsed, keep=True)
    return report


def _read_runner_output(report: TestReport, output: str, root: Path | None) -> None:
    """Counts and failing tests of another runner (cargo, node, go, …), read from its output."""
    parsed = runners.read_output(output, root)
    if parsed is not None:
        apply_runner_result(report, parsed)


def apply_runner_result(report: TestReport, parsed: RunnerResult, *, keep: bool = False) -> None:
    """The counts and tests a runner read, into `report`. A failure with no traceback shows its
    message there, unless `keep` (pytest's JUnit report: an empty traceback stays empty)."""
    report.passed, report.failed = parsed.passed, parsed.failed
    report.errors, report.skipped = parsed.errors, parsed.skipped
    report.failures = [
        FailingTest(f.test_id, f.message, f.traceback if keep else f.traceback or f.message)
        for f in parsed.failures
    ]
    report.passing = list(parsed.passing)
    report.structured = True
