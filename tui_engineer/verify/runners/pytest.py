"""pytest: recognised in any of its spellings (`pytest`, `python -m pytest`, `uv run pytest`),
run with a JUnit XML report written outside the worktree and read from it. Narrowed by
pytest-testmon's coverage where the project has it (verify/selection.py keeps that state), else
by the test files named for or importing a changed module (verify/related.py); a test-first
step's new test files are passed as arguments.

Test ids are pytest's node ids (`tests/test_x.py::TestK::test_m`), turned back from the dotted
class names of the JUnit report."""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from pathlib import Path

from tui_engineer.base.shell_command import words
from tui_engineer.verify.related import TEST_FILE_PATHSPECS, related_tests
from tui_engineer.verify.runner_result import MESSAGE_CHARS, Failure, RunnerResult
from tui_engineer.verify.runners.base import RunReport, shows_a_result

name = "pytest"

TRACEBACK_LINES = 40
_RUNNER_PREFIXES = (("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("hatch", "run"))


def claims(command: str, _root: Path | None = None) -> bool:
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


is_pytest_command = claims


def report_command(command: str, report: Path | None = None, _root: Path | None = None) -> str:
    """The pytest command with a JUnit XML report at `report` (outside the worktree) and
    without the cache plugin (no .pytest_cache folder in the shadow worktree to show up in the
    diff), unless the command already moved the cache elsewhere (test selection needs it)."""
    if report is None:
        return command
    extra = f" --junitxml={shlex.quote(str(report))}"
    if "no:cacheprovider" not in command and "cache_dir=" not in command:
        extra += " -p no:cacheprovider"
    return command + extra


with_pytest_report_args = report_command


def read(_output: str, _root: Path | None) -> RunnerResult | None:
    return None  # read from its JUnit report (`read_report`)


def read_report(report: Path, root: Path | None) -> RunnerResult | None:
    try:
        return parse_junit_xml(report, root)
    except (ET.ParseError, OSError):
        return None


def parse_junit_xml(path: Path, root: Path | None = None) -> RunnerResult:
    """Counts and failures from a JUnit XML file. Each <testcase> counts once (a teardown error is
    its own <testcase> in pytest's output, matching pytest's own counts). `root` lets test ids be
    written as pytest node ids (`tests/test_x.py::TestK::test_m`). Raises ET.ParseError/OSError."""
    result = RunnerResult("pytest")
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
        result.failures.append(_failure(test_id, outcome))
    return result


def _outcome(case: ET.Element) -> ET.Element | None:
    for tag in ("failure", "error", "skipped"):
        found = case.find(tag)
        if found is not None:
            return found
    return None


def _failure(test_id: str, element: ET.Element) -> Failure:
    message = (element.get("message") or "").strip()
    traceback = element.text or ""
    if not message:
        e_lines = [ln[1:].strip() for ln in traceback.splitlines() if ln.startswith("E ")]
        message = e_lines[0] if e_lines else _first_line(traceback)
    return Failure(test_id, message[:MESSAGE_CHARS], trim_traceback(traceback))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


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


def narrows(command: str, _root: Path | None) -> bool:
    return claims(command)


def narrowed(
    command: str, changed: Iterable[str], root: Path, files: Callable[..., list[str]]
) -> str | None:
    """`command` with the test files related to `changed` by name or import (the selection
    without coverage data), or None when there are none."""
    # Test files alone, as git matches related_tests' names: 2,000, not 40,000 to sort through.
    tests = related_tests(root, set(changed), files(*TEST_FILE_PATHSPECS))
    return files_command(command, root, tests)


def files_command(command: str, _root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test files (or node ids) `files`."""
    quoted = " ".join(shlex.quote(f) for f in files)
    return f"{command} {quoted}" if quoted else None


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"[.FEsxX]+\s*(?:\[\s*\d+%\])?"  # -q's progress
    r"|\S+ [.FEsxX]+\s*(?:\[\s*\d+%\])?"  # the default: a file's name, then its progress
    r"|\S+::\S+ (?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*"  # -v
)


started = shows_a_result(STARTED)


JUNIT_NOT_UTF8 = (
    "pytest could not write its report of the tests: a test file's name is not UTF-8, which "
    "pytest's --junitxml cannot encode (a pytest limitation); rename such files (git mv) to "
    "names in UTF-8"
)


def _junit_cannot_encode(output: str) -> bool:
    """pytest's JUnit writer crashed on a name that is not UTF-8 (a surrogate in a node id)."""
    return "junitxml.py" in output and "UnicodeEncodeError" in output


def start_problem(report: RunReport) -> str | None:
    """Why this run on the starting commit shows pytest did not get to run the tests."""
    if report.exit_code in (3, 4):
        return "pytest stopped with an internal or usage error before running tests"
    if report.exit_code == 5:
        return "pytest collected no tests"
    if not report.structured and _junit_cannot_encode(report.output_tail):
        return JUNIT_NOT_UTF8
    ran = report.passed + report.failed + report.errors
    if not report.structured or ran == len(report.failures) == 0 and report.exit_code:
        return "pytest wrote no report of its tests"
    if report.exit_code == 2 and not report.passing:
        return "pytest was interrupted before running any test (an error collecting them)"
    return None


_SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$|^={3,}")
_SUMMARY_WORDS = ("FAILED", "ERROR")


def old_lines(lines: list[str], ids: set[str]) -> set[int]:
    """The lines about the tests `ids`: the section of each (`____ test_mul ____` up to the
    next section) and its line of the short summary (`FAILED tests/x.py::test_mul - …`)."""
    names = {i.rsplit("::", 1)[-1] for i in ids} | {i.replace("::", ".") for i in ids}
    names |= {i.split("::", 1)[1].replace("::", ".") for i in ids if "::" in i}  # Class.test
    found: set[int] = set()
    skipping = False
    for index, line in enumerate(lines):
        section = _SECTION.match(line.strip())
        if section:
            skipping = (section.group("name") or "") in names
        if skipping or any(line.startswith(f"{w} {i}") for i in ids for w in _SUMMARY_WORDS):
            found.add(index)
    return found
