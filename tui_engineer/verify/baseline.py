"""The suite on the starting commit: which tests already failed before the session touched
anything. A step is judged against it: it passes when no test that passed at the start fails
now and its own tests pass; failures that were there before are shown apart, not the step's.

Runner-agnostic: it compares test ids and outcomes from the parsed report (`TestReport.passing`
and `failures`), whatever runner produced them. A result is kept per tree and command in the user
cache, so a second session on the same commit does not run the suite again."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path

import platformdirs

from tui_engineer.verify.report import FailingTest, TestReport, tail_lines

SHOWN_IDS = 3  # old failures named in a one-line summary before "…"
BAD_START_LINES = 15  # lines of output shown when the suite cannot run at all


@dataclass(frozen=True)
class Baseline:
    """The outcome of every test on the starting commit."""

    command: str
    passing: frozenset[str]
    failing: tuple[str, ...]  # ids of the tests (or modules) red before the session
    unreadable: bool = False  # red, and no report test by test: judged by the exit code alone

    def line(self) -> str:
        """'2 failing before this session: tests/test_x.py::test_mul, …' ('' when none)."""
        if not self.failing:
            return ""
        shown = ", ".join(self.failing[:SHOWN_IDS])
        more = " …" if len(self.failing) > SHOWN_IDS else ""
        return f"{len(self.failing)} failing before this session: {shown}{more}"

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.command, "passing": sorted(self.passing), "failing": self.failing,
            "unreadable": self.unreadable,
        }  # fmt: skip

    @classmethod
    def from_report(cls, report: TestReport) -> Baseline:
        return cls(
            report.command,
            frozenset(report.passing),
            tuple(sorted({f.test_id for f in report.failures})),
            unreadable=report.exit_code != 0 and not report.structured,
        )

    def judge(self, report: TestReport, about: str = "") -> TestReport:
        """`report` with the failures already red at the start moved to `report.old`, unless
        `about` (the request and the step) names them: then they are the step's to fix."""
        if not report.structured or not self.failing:
            return report
        old_ids = {i for i in self.failing if not _named(i, about)}
        kept: list[FailingTest] = []
        for failure in report.failures:
            (report.old if failure.test_id in old_ids else kept).append(failure)
        report.failures = kept
        return report


def _named(test_id: str, text: str) -> bool:
    """Does `text` name this test (its id, or its function name as a word)?"""
    if not text:
        return False
    name = test_id.rsplit("::", 1)[-1].split("[", 1)[0]
    return test_id in text or bool(re.search(rf"\b{re.escape(name)}\b", text))


JUNIT_NOT_UTF8 = (
    "pytest could not write its report of the tests: a test file's name is not UTF-8, which "
    "pytest's --junitxml cannot encode (a pytest limitation); rename such files (git mv) to "
    "names in UTF-8"
)


def _junit_cannot_encode(output: str) -> bool:
    """pytest's JUnit writer crashed on a name that is not UTF-8 (a surrogate in a node id)."""
    return "junitxml.py" in output and "UnicodeEncodeError" in output


def start_problem(report: TestReport, pytest: bool) -> str | None:
    """Why this run on the starting commit shows the suite cannot run at all (None: it ran).
    Failing tests are fine (they are the baseline); no test running is not."""
    if report.timed_out:
        return f"it did not finish within the test timeout ({report.summary()})"
    if report.exit_code is not None and report.exit_code < 0:
        return f"it was {report.summary()}"
    if report.exit_code in (126, 127):
        return "its program could not be started"
    if pytest:
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


def _hidden_program(command: str, report: TestReport) -> str:
    """A sentence when the program that was not found exists on this machine: the sandbox does
    not show the folder it lives in."""
    if report.exit_code not in (126, 127):
        return ""
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    words = [w for w in words if not re.match(r"^\w+=", w)]
    if words and words[0].startswith("/") and Path(words[0]).exists():
        return (
            f"\n\n`{words[0]}` exists on this machine but not inside the sandbox, which shows "
            "only some folders (docs/sandbox.md#the-local-sandbox-bubblewrap): activate that "
            "environment (VIRTUAL_ENV), or run the tests uncontained with --sandbox none."
        )
    return ""


def start_failure_message(command: str, problem: str, report: TestReport) -> str:
    """What the user reads when the suite cannot run: which command, its last lines, what to do."""
    tail = tail_lines(report.output_tail, BAD_START_LINES) or "(no output)"
    return (
        f"The tests cannot run on the starting commit, so no step could be verified: "
        f"`{command}`: {problem}.\n\nIts last lines:\n{tail}{_hidden_program(command, report)}\n\n"
        "What to do: set test_command to a command that runs your tests (--test-cmd, or "
        "test_command in .tui-engineer.toml), activate the project's virtualenv before starting "
        "tui-engineer so its pytest and packages are found, or work without tests with "
        "--unverified."
    )


def _cache_file(root: Path, command: str, tree: str) -> Path:
    key = sha1(f"{root.resolve()}\0{command}".encode()).hexdigest()[:12]
    return platformdirs.user_cache_path("tui-engineer") / "baseline" / f"{key}-{tree}.json"


def recorded(root: Path, command: str, tree: str) -> Baseline | None:
    """The baseline kept for this tree and command, if any."""
    try:
        data = json.loads(_cache_file(root, command, tree).read_text(encoding="utf-8"))
        passing, failing = frozenset(data["passing"]), tuple(data["failing"])
        return Baseline(command, passing, failing, bool(data.get("unreadable")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record(root: Path, tree: str, baseline: Baseline) -> None:
    path = _cache_file(root, baseline.command, tree)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(baseline.to_dict()), encoding="utf-8")
    except OSError:
        pass  # a cache: the next session runs the suite again
