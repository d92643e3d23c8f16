"""What a test run produced, in a form the engine, the UI and the model can use: counts, failing
test ids, trimmed tracebacks and the tail of the output. For pytest the counts come from its JUnit
XML report; for cargo, node's test runner and go from their output (runner_output.py); any other
command is judged by its exit code and output tail alone."""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tui_engineer.shell_command import words
from tui_engineer.verify.runner_output import RunnerResult, parse_runner_output
from tui_engineer.verify.runners import unittest
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
    # Old failures this step's change reaches (its narrowed runs chose them, or it changed
    # their file) that still fail: shown as "still failing", not hidden among the old ones.
    reached: list[str] = field(default_factory=list)

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
        if self.reached:
            text += f" (still failing: {_listed(self.reached)})"
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


_SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$|^={3,}")


def _without_old(tail: str, old: list[FailingTest]) -> str:
    """The output without what it says about failures that predate the session: pytest's
    section of each ("____ test_mul ____" up to the next section) and its summary line,
    unittest's block of each ("FAIL: test_mul (…)" up to the next) and its `-v` line. The
    model is not asked about them; they are shown to the user apart."""
    if not old:
        return tail
    ids = {f.test_id for f in old}
    names = {i.rsplit("::", 1)[-1] for i in ids} | {i.replace("::", ".") for i in ids}
    dotted = {unittest.dotted(i) for i in ids}
    kept: list[str] = []
    skipping = False
    for line in tail.splitlines():
        section = _SECTION.match(line.strip())
        if section:
            skipping = (section.group("name") or "") in names
        elif unittest.ends_blocks(line):
            skipping = False
        elif (block := unittest.block_test(line)) is not None:
            skipping = block in dotted
        if skipping or any(line.startswith(f"{word} {i}") for i in ids for word in _OUTCOMES):
            continue
        if unittest.verbose_test(line) in dotted:
            continue
        kept.append(line)
    return "\n".join(kept)


_OUTCOMES = ("FAILED", "ERROR")


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


def trim_traceback(text: str, max_lines: int = TRACEBACK_LINES) -> str:
    """Keep the last `max_lines` lines; if pytest's `E   ` lines (the assertion and its
    explanation) fall before that window, keep them too so the reason is never cut off."""
    lines = text.rstrip().splitlines()
    if len(lines) <= max_lines:
        return "\n".join(lines)
    kept = lines[-max_lines:]
    if not any(line.startswith("E ") for line in kept):
        e_lines = [line for line in lines[:-max_lines] if line.startswith("E ")][:10]
        kept = e_lines + ["[...]"] + kept if e_lines else kept
    dropped = len(lines) - max_lines
    return "\n".join([f"[... {dropped} earlier lines trimmed ...]", *kept])


# --- pytest: recognising the command and reading its JUnit XML -------------------------------

_RUNNER_PREFIXES = (("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"))


def is_pytest_command(command: str) -> bool:
    """True for a simple command that runs pytest: `pytest ...`, `python -m pytest ...`,
    `.venv/bin/python -m pytest`, `uv run pytest`, optionally after `VAR=value` assignments.
    Pipelines and compound commands are left alone (extra args could land in the wrong place)."""
    tokens = words(command)
    for prefix in _RUNNER_PREFIXES:
        if tuple(tokens[:2]) == prefix:
            tokens = tokens[2:]
    if not tokens:
        return False
    program = Path(tokens[0]).name
    if program in {"pytest", "py.test"}:
        return True
    if program.startswith("python"):
        return any(a == "-m" and b == "pytest" for a, b in zip(tokens, tokens[1:], strict=False))
    return False


def with_pytest_report_args(command: str, junit_path: Path) -> str:
    """The pytest command with a JUnit XML report (written outside the worktree) and without the
    cache plugin (no .pytest_cache folder in the shadow worktree to show up in the diff), unless
    the command already moved the cache elsewhere (test selection needs it)."""
    extra = f" --junitxml={shlex.quote(str(junit_path))}"
    if "no:cacheprovider" not in command and "cache_dir=" not in command:
        extra += " -p no:cacheprovider"
    return command + extra


@dataclass
class JUnitResult:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failures: list[FailingTest] = field(default_factory=list)
    passing: list[str] = field(default_factory=list)


def parse_junit_xml(path: Path, root: Path | None = None) -> JUnitResult:
    """Counts and failures from a JUnit XML file. Each <testcase> counts once (a teardown error is
    its own <testcase> in pytest's output, matching pytest's own counts). `root` lets test ids be
    written as pytest node ids (`tests/test_x.py::TestK::test_m`). Raises ET.ParseError/OSError."""
    result = JUnitResult()
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = _outcome(case)
        if outcome is None:
            result.passed += 1
            result.passing.append(node_id(case.get("classname", ""), case.get("name", ""), root))
            continue
        kind = outcome.tag
        if kind == "skipped":
            result.skipped += 1
            continue
        if kind == "failure":
            result.failed += 1
        else:
            result.errors += 1
        test_id = node_id(case.get("classname", ""), case.get("name", ""), root)
        result.failures.append(_failing_test(test_id, outcome))
    return result


def _outcome(case: ET.Element) -> ET.Element | None:
    for tag in ("failure", "error", "skipped"):
        found = case.find(tag)
        if found is not None:
            return found
    return None


def _failing_test(test_id: str, element: ET.Element) -> FailingTest:
    message = (element.get("message") or "").strip()
    traceback = element.text or ""
    if not message:
        e_lines = [ln[1:].strip() for ln in traceback.splitlines() if ln.startswith("E ")]
        message = e_lines[0] if e_lines else _first_line(traceback)
    return FailingTest(
        test_id=test_id,
        message=message[:MESSAGE_CHARS],
        traceback=trim_traceback(traceback),
    )


def node_id(classname: str, name: str, root: Path | None) -> str:
    """pytest's JUnit classname is dotted (`tests.test_a.TestK`); find the module file under
    `root` to turn it back into a node id. Collection errors have no classname: the name is
    the module."""
    dotted, leaf = (classname, name) if classname else (name, "")
    parts = dotted.split(".")
    if root is not None:
        for cut in range(len(parts), 0, -1):
            module = "/".join(parts[:cut]) + ".py"
            if (root / module).is_file():
                return "::".join([module, *parts[cut:], *([leaf] if leaf else [])])
    return f"{classname}::{name}" if classname else name


def report_from_run(
    command: str, run: RunResult, junit_path: Path | None = None, root: Path | None = None
) -> TestReport:
    """Build the report for `command` (as the user wrote it). With `junit_path` (a pytest run),
    counts come from the XML; if pytest wrote none or a broken one, fall back to exit code + tail
    and say why in `note`."""
    report = TestReport(
        command=command,
        exit_code=run.exit_code,
        duration=run.duration,
        timed_out=run.timed_out,
        output_tail=tail_lines(run.output),
    )
    if junit_path is None:
        if not run.timed_out:
            _read_runner_output(report, run.output, root)
        return report
    if run.timed_out:
        report.note = "pytest was stopped by the timeout before writing its report."
        return report
    try:
        parsed = parse_junit_xml(junit_path, root)
    except FileNotFoundError:
        report.note = (
            "pytest wrote no JUnit report (it probably failed before collecting tests, e.g. a "
            "bad option or a crash in conftest.py); judge by the output below."
        )
        return report
    except (ET.ParseError, OSError) as err:
        report.note = f"pytest's JUnit report could not be read ({err}); judge by the output."
        return report
    report.passed, report.failed = parsed.passed, parsed.failed
    report.errors, report.skipped = parsed.errors, parsed.skipped
    report.failures = parsed.failures
    report.passing = parsed.passing
    report.structured = True
    return report


def _read_runner_output(report: TestReport, output: str, root: Path | None) -> None:
    """Counts and failing tests of another runner (cargo, node, go), read from its output."""
    parsed = parse_runner_output(output, root)
    if parsed is not None:
        apply_runner_result(report, parsed)


def apply_runner_result(report: TestReport, parsed: RunnerResult) -> None:
    report.passed, report.failed = parsed.passed, parsed.failed
    report.errors, report.skipped = parsed.errors, parsed.skipped
    report.failures = [
        FailingTest(f.test_id, f.message, f.traceback or f.message) for f in parsed.failures
    ]
    report.passing = list(parsed.passing)
    report.structured = True
