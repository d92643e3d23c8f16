"""zope.testrunner (`zope-testrunner --test-path=src`, `python -m zope.testrunner`): the runner
of the Zope and Plone packages (zope.event, zope.interface…), read test by test from its text
report. It runs with `-vv` added, so that each test is named on a line of its own:

     test_add (calc.tests.test_calc.CalcTests.test_add) (0.000 s)
     test_skipped (calc.tests.test_calc.CalcTests.test_skipped) (skipped: not yet)
     double (calc.tests.test_doc) (0.001 s)

    Failure in test test_add (calc.tests.test_calc.CalcTests.test_add)
    Traceback (most recent call last):
    …
    AssertionError: -1 != 5

      Ran 6 tests with 2 failures, 1 errors, 1 skipped in 0.003 seconds.

(`and 1 skipped` without `-c`; a `Total: …` line after several layers), and a module that
cannot be imported is a `Module: calc.tests.test_calc` block under `Test-module import
failures:`. Colour (`-c`) is taken out of the output before it is read (base/escapes.py).

Test ids are pytest's node ids where the module file is found under the root, `src/` or the
`--test-path` (`src/calc/tests/test_calc.py::CalcTests::test_add`), else the dotted name."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from tui_engineer.base.escapes import without_escapes
from tui_engineer.base.shell_command import python_module, words
from tui_engineer.verify.runner_result import MESSAGE_CHARS, Failure, RunnerResult, trim_lines
from tui_engineer.verify.runners.base import RunReport, shows_a_result

name = "zope.testrunner"

_PROGRAMS = {"zope-testrunner"}
_RAN = re.compile(
    r"^\s*(?:Ran|Total:) (\d+) tests?(?: with|,) (\d+) failures?(?:,| and) (\d+) errors?"
    r"(?:(?:,| and) (\d+) skipped)?"
)
_TEST = re.compile(r"^ (\S+) \(([\w.]+)\)(?: \((?P<how>[^()]*)\))?$")  # a -vv line
_BLOCK = re.compile(r"^(Failure|Error) in test (\S+) \(([\w.]+)\)$")
_MODULE = re.compile(r"^Module: ([\w.]+)$")
_HOMES = ("", "src", "tests", "test")


def claims(command: str, _root: Path | None = None) -> bool:
    tokens = words(command)
    if not tokens:
        return False
    return Path(tokens[0]).name in _PROGRAMS or python_module(tokens) == "zope.testrunner"


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    """`command` with -vv: each test named on a line of its own (its verbosity adds up)."""
    return f"{command} -vv" if claims(command) else command


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None  # read from its output


def read(output: str, root: Path | None) -> RunnerResult | None:
    """zope.testrunner's report in `output`, or None when it has no `Ran N tests with …`."""
    lines = without_escapes(output).splitlines()
    summaries = [m for m in map(_RAN.match, lines) if m]
    if not summaries:
        return None
    totals = [m for m in summaries if m.group(0).lstrip().startswith("Total:")]
    counted = totals[-1:] or summaries
    result = RunnerResult(name)
    ran = sum(int(m[1]) for m in counted)
    result.failed = sum(int(m[2]) for m in counted)
    result.errors = sum(int(m[3]) for m in counted)
    result.skipped = sum(int(m[4] or 0) for m in counted)
    result.passed = max(0, ran - result.failed - result.errors - result.skipped)
    homes = _homes(root)
    result.failures = _failures(lines, homes) + _import_failures(lines, homes)
    failing = {f.test_id for f in result.failures}
    for line in lines:
        test = _TEST.match(line)
        if test and not (test["how"] or "").startswith("skipped"):
            test_id = _located(_dotted(test[1], test[2]), homes)
            if test_id not in failing and test_id not in result.passing:
                result.passing.append(test_id)
    return result


def _failures(lines: list[str], homes: list[Path]) -> list[Failure]:
    found: dict[str, Failure] = {}
    for index, line in enumerate(lines):
        block = _BLOCK.match(line)
        if block is None:
            continue
        test_id = _located(_dotted(block[2], block[3]), homes)
        body = _body(lines, index + 1)
        found.setdefault(test_id, Failure(test_id, _message(body), trim_lines(body)))
    return list(found.values())


def _import_failures(lines: list[str], homes: list[Path]) -> list[Failure]:
    """A `Module: x.y` block (up to the next one or two blank lines) per module not imported."""
    found = []
    for index, line in enumerate(lines):
        module = _MODULE.match(line)
        if module is None:
            continue
        body = _body(lines, index + 1)
        found.append(Failure(_located(module[1], homes), _message(body), trim_lines(body)))
    return found


def _body(lines: list[str], start: int) -> list[str]:
    """A block's lines: up to the next test line, block, summary, or two blank lines."""
    body: list[str] = []
    for line in lines[start:]:
        if _TEST.match(line) or _BLOCK.match(line) or _MODULE.match(line) or _RAN.match(line):
            break
        if not line.strip() and body and not body[-1].strip():
            break
        body.append(line)
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    return body


def _message(body: list[str]) -> str:
    """The exception's line (`AssertionError: -1 != 5`), or a doctest's `Failed example`."""
    start = max((i for i, ln in enumerate(body) if ln.startswith("Traceback")), default=-1)
    if start >= 0:
        for line in body[start + 1 :]:
            if line and not line.startswith(" "):
                return line.strip()[:MESSAGE_CHARS]
    if any(ln.startswith("Failed example:") for ln in body):
        return "\n".join(ln.strip() for ln in body[-6:] if ln.strip())[:MESSAGE_CHARS]
    return next((ln.strip() for ln in reversed(body) if ln.strip()), "")[:MESSAGE_CHARS]


def _dotted(test: str, where: str) -> str:
    """`test_add (pkg.mod.Class.test_add)` (Python 3.11's), `test_add (pkg.mod.Class)`
    (before), `double (pkg.mod)` (a doctest) → the test's dotted name."""
    return where if where.endswith("." + test) or where == test else f"{where}.{test}"


def _homes(root: Path | None) -> list[Path]:
    return [root / home if home else root for home in _HOMES] if root is not None else []


def _located(dotted: str, homes: list[Path]) -> str:
    parts = dotted.split(".")
    for home in homes:
        for cut in range(len(parts), 0, -1):
            module = home.joinpath(*parts[:cut]).with_suffix(".py")
            if module.is_file():
                path = module.relative_to(homes[0]).as_posix()
                return "::".join([path, *parts[cut:]])
    return dotted


def _dotted_of(test_id: str) -> str:
    """`src/calc/tests/test_calc.py::CalcTests::test_add` → `calc.tests.test_calc.CalcTests
    .test_add` (its home folder left out), for matching lines of the output."""
    module, _, rest = test_id.partition("::")
    parts = module.removesuffix(".py").split("/")
    if parts[0] in _HOMES:
        parts = parts[1:]
    return ".".join([*parts, *rest.split("::")]) if rest else ".".join(parts)


def narrows(_command: str, _root: Path | None) -> bool:
    return False  # its own selection (-t, -m) is left to the user: the suite runs whole


def narrowed(
    _command: str, _changed: Iterable[str], _root: Path, _files: Callable[..., list[str]]
) -> str | None:
    return None


def files_command(_command: str, _root: Path, _files: Iterable[str]) -> str | None:
    return None


# A line that shows a test's result: a -vv line, its dots, or its summary.
STARTED = re.compile(r"\S+ \([\w.]+\)(?: \([^()]*\))?|[.FE]+|Ran \d+ tests? with .*")
started = shows_a_result(STARTED)


def start_problem(report: RunReport) -> str | None:
    if not report.structured:
        return "zope.testrunner printed no report of its tests"
    if report.passed + report.failed + report.errors + report.skipped == 0:
        return "zope.testrunner found no tests (is --test-path the folder holding the package?)"
    return None


def old_lines(lines: list[str], ids: set[str]) -> set[int]:
    """The lines about the tests `ids`: each one's -vv line, its block, its line in the lists
    at the end (`Tests with failures:`)."""
    names = {_dotted_of(i) for i in ids}
    found: set[int] = set()
    skipping = False
    for index, raw in enumerate(lines):
        line = without_escapes(raw)
        test, block = _TEST.match(line), _BLOCK.match(line)
        module = _MODULE.match(line)
        listed = re.match(r"^\s+(\S+) \(([\w.]+)\)$", line)
        if block or module:
            dotted = _dotted(block[2], block[3]) if block else module[1]  # type: ignore[index]
            skipping = dotted in names
        elif test or _RAN.match(line):
            skipping = False
        about = test or listed
        if skipping or (about and _dotted(about[1], about[2]) in names):
            found.add(index)
    return found
