"""Python's unittest: `python -m unittest`, run with `-v` so that each test's outcome is printed,
and read test by test from its text report. The reader goes by the output, not the command, so
a project's own script that prints unittest's report (Django's `tests/runtests.py`) is read too:
counts from `Ran N tests` and `FAILED (failures=…)`, failing tests from the `FAIL:`/`ERROR:`
blocks, passing ones from the `-v` lines.

Test ids are pytest's node ids where the module file is found (`tests/test_calc.py::CalcTests
::test_add`), so a request naming `test_add` names it, and ids stay the same when a project
moves between the two runners; unittest's dotted name otherwise."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.shell_command import python_module, words
from tui_engineer.verify.related import TEST_FILE_PATHSPECS, related_tests
from tui_engineer.verify.runner_result import MESSAGE_CHARS, Failure, RunnerResult, trim_lines
from tui_engineer.verify.runners.base import RunReport, shows_a_result

name = "unittest"

_VERBOSE = {"-v", "--verbose"}
_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$", re.M)
_END = re.compile(r"^(OK|FAILED|NO TESTS RAN)(?: \((?P<counts>[^)]*)\))?$", re.M)
_BLOCK = re.compile(r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([\w.]+)\)(?: \(.*\))?$")
_HEADER = re.compile(r"^(\w+) \(([\w.]+)\)(?: \((?:[^()]|\([^()]*\))*\))?(?: \.\.\. (.*))?$")
_RESULTS = {"ok": "pass", "FAIL": "fail", "ERROR": "error", "expected failure": "pass"}
_RULE_EQ = "=" * 70
_RULE_DASH = "-" * 70
_FAILED_LOAD = "unittest.loader._FailedTest."
_HOMES = ("", "tests", "test")  # where the dotted names of a project's own runner start


def claims(command: str, _root: Path | None = None) -> bool:
    return python_module(words(command)) == "unittest"


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    """`command` with -v (each test's outcome on a line of its own), unless it has it."""
    tokens = words(command)
    if python_module(tokens) != "unittest" or _VERBOSE & set(tokens):
        return command
    return f"{command} -v"


def narrows(command: str, _root: Path | None) -> bool:
    return claims(command)


def narrowed(
    command: str, changed: Iterable[str], root: Path, files: Callable[..., list[str]]
) -> str | None:
    """`command` running the test modules that changed, are named for a changed module or
    import it (verify/related.py), or None (run it whole)."""
    # Test files alone, as git matches related_tests' names: not every file to sort through.
    return modules_command(command, related_tests(root, set(changed), files(*TEST_FILE_PATHSPECS)))


def files_command(_command: str, _root: Path, _files: Iterable[str]) -> str | None:
    return None  # a test-first step's new tests run with the whole command


def modules_command(command: str, test_files: list[str]) -> str | None:
    """`command` running only `test_files` (paths from the root), or None (run it whole): by
    module (`python -m unittest -v tests.test_calc`) when it discovers from the root, by
    pattern (`discover -s tests -p test_calc.py`) for one file of a discovered folder."""
    tokens = words(command)
    if python_module(tokens) != "unittest" or not test_files:
        return None
    args = tokens[tokens.index("unittest") + 1 :]
    positional = [a for a in args if not a.startswith("-")]
    if not positional:
        modules = [f.removesuffix(".py").replace("/", ".") for f in sorted(test_files)]
        return f"{command} {' '.join(modules)}"
    if positional[0] != "discover" or "-p" in args or "--pattern" in args:
        return None  # the user's own selection: leave it
    start = _option(args, "-s", "--start-directory")
    if len(test_files) != 1 or start is None or "-t" in args or "--top-level-directory" in args:
        return None
    file = PurePosixPath(test_files[0])
    if str(file.parent) != start.strip("/").removeprefix("./"):
        return None
    return f"{command} -p {file.name}"


def _option(args: list[str], short: str, long: str) -> str | None:
    for flag, value in zip(args, args[1:], strict=False):
        if flag in (short, long):
            return value
    return None


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None  # read from its output


def read(output: str, root: Path | None) -> RunnerResult | None:
    """unittest's report in `output`, or None when there is no `Ran N tests` summary."""
    ran = [int(n) for n in _RAN.findall(output)]
    ends = list(_END.finditer(output))
    if not ran or not ends:
        return None
    result = RunnerResult("unittest")
    counts = _counts(ends)
    lines = output.splitlines()
    blocks = _failures(lines, root)
    result.failures = [failure for _, failure in blocks]
    # Per test, as the blocks name them: a test whose subtests failed twice failed once.
    kinds = [kind for kind, _ in blocks]
    failed = counts.get("failures", 0) + counts.get("unexpected successes", 0)
    result.failed = kinds.count("FAIL") + kinds.count("UNEXPECTED SUCCESS") if blocks else failed
    result.errors = kinds.count("ERROR") if blocks else counts.get("errors", 0)
    result.skipped = counts.get("skipped", 0)
    result.passed = max(0, sum(ran) - result.failed - result.errors - result.skipped)
    outcomes = _outcomes(lines)
    failing = {f.test_id for f in result.failures}
    for (test, where), outcome in outcomes.items():
        test_id = test_id_of(test, where, root)
        if outcome == "pass" and test_id not in failing:
            result.passing.append(test_id)
    return result


def _counts(ends: list[re.Match[str]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for end in ends:
        for part in (end["counts"] or "").split(","):
            label, _, number = part.strip().partition("=")
            if number.isdigit():
                counts[label] = counts.get(label, 0) + int(number)
    return counts


def test_id_of(test: str, where: str, root: Path | None) -> str:
    """`test_add`, `tests.test_calc.CalcTests.test_add` (3.11's) or `tests.test_calc.CalcTests`
    (before 3.11) → `tests/test_calc.py::CalcTests::test_add` when that file is under `root`."""
    if where.startswith(_FAILED_LOAD):  # a module that could not be imported
        return _located(where.removeprefix(_FAILED_LOAD), root)
    dotted = where if where.endswith("." + test) else f"{where}.{test}"
    return _located(dotted, root)


def _located(dotted: str, root: Path | None) -> str:
    parts = dotted.split(".")
    for home in _HOMES if root is not None else ():
        for cut in range(len(parts), 0, -1):
            module = "/".join([*([home] if home else []), *parts[:cut]]) + ".py"
            if (root / module).is_file():  # type: ignore[operator]
                return "::".join([module, *parts[cut:]])
    return dotted


def dotted(test_id: str) -> str:
    """`tests/test_calc.py::CalcTests::test_add` → `tests.test_calc.CalcTests.test_add`."""
    module, _, rest = test_id.partition("::")
    name = module.removesuffix(".py").replace("/", ".")
    return ".".join([name, *rest.split("::")]) if rest else name


def _dotted_name(test: str, where: str) -> str:
    where = where.removeprefix(_FAILED_LOAD)
    return where if where.endswith("." + test) or where == test else f"{where}.{test}"


def block_test(line: str) -> str | None:
    """The dotted name of the test whose `FAIL:`/`ERROR:` block `line` starts, else None."""
    block = _BLOCK.match(line)
    return _dotted_name(block[2], block[3]) if block else None


def verbose_test(line: str) -> str | None:
    """The dotted name of the test a `-v` line reports on, else None."""
    header = _HEADER.match(line)
    return _dotted_name(header[1], header[2]) if header and header[3] else None


def ends_blocks(line: str) -> bool:
    """Is `line` the summary that follows the last block (`Ran 3 tests in 0.01s`)?"""
    return _RAN.match(line) is not None


def _failures(lines: list[str], root: Path | None) -> list[tuple[str, Failure]]:
    """(kind, failure), one per test of the `FAIL:`/`ERROR:` blocks (each failing subtest of
    a test has a block of its own)."""
    found: dict[str, tuple[str, Failure]] = {}
    for index, line in enumerate(lines):
        block = _BLOCK.match(line)
        if block is None or index == 0 or lines[index - 1] != _RULE_EQ:
            continue
        test_id = test_id_of(block[2], block[3], root)
        body = _body(lines, index + 1)
        if test_id not in found:
            failure = Failure(test_id, _message(body, block[1]), trim_lines(body))
            found[test_id] = (block[1], failure)
    return list(found.values())


def _body(lines: list[str], start: int) -> list[str]:
    """A block's traceback: after its dashed rule, up to the next block or the summary."""
    body: list[str] = []
    started = False
    for index in range(start, len(lines)):
        line = lines[index]
        if line == _RULE_EQ:
            break
        if line == _RULE_DASH:
            if started and index + 1 < len(lines) and _RAN.match(lines[index + 1]):
                break
            if not started:
                started = True
                continue
        if started:
            body.append(line)
    while body and not body[-1].strip():
        body.pop()
    return body


def _message(body: list[str], kind: str) -> str:
    """The exception's line (`AssertionError: -1 != 5`): the first line at the margin after the
    last traceback header."""
    if kind == "UNEXPECTED SUCCESS":
        return "unexpected success: the test is marked as an expected failure but passed"
    start = max((i for i, ln in enumerate(body) if ln.startswith("Traceback")), default=-1)
    for line in body[start + 1 :]:
        if line and not line.startswith(" "):
            return line.strip()[:MESSAGE_CHARS]
    return next((ln.strip() for ln in reversed(body) if ln.strip()), "")[:MESSAGE_CHARS]


def _outcomes(lines: list[str]) -> dict[tuple[str, str], str]:
    """Each test's outcome from `-v` lines: `test_add (tests.test_calc.CalcTests.test_add) ... ok`;
    a docstring moves ` ... ok` to the next line, and what a test prints comes before it."""
    outcomes: dict[tuple[str, str], str] = {}
    pending: tuple[str, str] | None = None
    for line in lines:
        header = _HEADER.match(line)
        if header:
            pending = (header[1], header[2])
            rest = header[3]
        elif pending is not None and " ... " in line:
            rest = line.rsplit(" ... ", 1)[1]
        else:
            rest = line if pending is not None else None
        if pending is None or rest is None:
            continue
        outcome = _outcome(rest.strip())
        if outcome:
            outcomes[pending] = outcome
            pending = None
        elif line in (_RULE_EQ, _RULE_DASH):
            pending = None
    return outcomes


def _outcome(text: str) -> str | None:
    if text in _RESULTS:
        return _RESULTS[text]
    if text.startswith("skipped"):
        return "skip"
    if text == "unexpected success":
        return "fail"
    return None


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"[.FEsxX]+"  # its dots
    r"|Ran \d+ tests? in .*"
)


started = shows_a_result(STARTED)


def start_problem(report: RunReport) -> str | None:
    """Why this run on the starting commit shows unittest did not get to run the tests."""
    if not report.structured:
        return "unittest printed no report of its tests"
    if report.passed + report.failed + report.errors + report.skipped == 0:
        return (
            "unittest found no tests (its discovery looks for test*.py files in packages: "
            "folders with an __init__.py)"
        )
    return None


_RULE = re.compile(r"^={3,}$")


def old_lines(lines: list[str], ids: set[str]) -> set[int]:
    """The lines about the tests `ids`: the `FAIL:`/`ERROR:` block of each (up to the next
    `====` rule or the `Ran N tests` summary) and its `-v` line."""
    dotted_ids = {dotted(i) for i in ids}
    found: set[int] = set()
    skipping = False
    for index, line in enumerate(lines):
        if _RULE.match(line.strip()) or ends_blocks(line):
            skipping = False
        elif (block := block_test(line)) is not None:
            skipping = block in dotted_ids
        if skipping or verbose_test(line) in dotted_ids:
            found.add(index)
    return found
