"""The suite on the starting commit: which tests already failed before the session touched
anything. A step is judged against it: it passes when no test that passed at the start fails
now and its own tests pass; failures that were there before are shown apart, not the step's.

Runner-agnostic: it compares test ids and outcomes from the parsed report (`TestReport.passing`
and `failures`), whatever runner produced them. A result is kept per tree and command in the user
cache, so a second session on the same commit does not run the suite again."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from hashlib import sha1
from pathlib import Path

import platformdirs

from tui_engineer.base.shell_command import last_command, words
from tui_engineer.base.shell_command import program as first_program
from tui_engineer.verify.crashes import runner_crash
from tui_engineer.verify.report import FailingTest, TestReport, tail_lines
from tui_engineer.verify.runners import node, runner_for, runner_name
from tui_engineer.verify.runners import pytest as pytest_runner
from tui_engineer.verify.runners.pytest import JUNIT_NOT_UTF8 as JUNIT_NOT_UTF8
from tui_engineer.verify.targets import failures_for_model
from tui_engineer.verify.toolchain_failures import ToolchainProblem, toolchain_problem

SHOWN_IDS = 3  # old failures named in a one-line summary before "…"
BAD_START_LINES = 15  # lines of output shown when the suite cannot run at all


@dataclass(frozen=True)
class Baseline:
    """The outcome of every test on the starting commit."""

    command: str
    passing: frozenset[str]
    failing: tuple[str, ...]  # ids of the tests (or modules) red before the session
    # (id, its one-line reason) of each failing one: what the model is told fails at the start.
    lines: tuple[tuple[str, str], ...] = ()
    unreadable: bool = False  # red, and no report test by test: judged by the exit code alone

    def line(self) -> str:
        """'2 failing before this session: tests/test_x.py::test_mul, …' ('' when none)."""
        if not self.failing:
            return ""
        shown = ", ".join(self.failing[:SHOWN_IDS])
        more = " …" if len(self.failing) > SHOWN_IDS else ""
        return f"{len(self.failing)} failing before this session: {shown}{more}"

    def for_model(self, targets: frozenset[str], who: str = "This step") -> str:
        """What failed at the start, one line each, and which of it `who` is to fix."""
        lines = self.lines or tuple((i, "") for i in self.failing)
        return failures_for_model(lines, targets, who)

    def to_dict(self) -> dict[str, object]:
        return {
            "command": self.command,
            "passing": sorted(self.passing),
            "failing": self.failing,
            "lines": [list(pair) for pair in self.lines],
            "unreadable": self.unreadable,
        }

    @classmethod
    def from_report(cls, report: TestReport) -> Baseline:
        reasons: dict[str, str] = {}
        for f in report.failures:
            reasons.setdefault(f.test_id, _one_line(f.message))
        failing = tuple(sorted(reasons))
        return cls(
            report.command,
            frozenset(report.passing),
            failing,
            tuple((i, reasons[i]) for i in failing),
            unreadable=report.exit_code != 0 and not report.structured,
        )

    def judge(self, report: TestReport, targets: frozenset[str] = frozenset()) -> TestReport:
        """`report` with the failures already red at the start moved to `report.old`, except
        the step's `targets` (verify/targets.py): those stay its failures until they pass.
        Old failures that pass now are listed in `report.fixed`."""
        if not report.structured or not self.failing:
            return report
        report.fixed = fixed(self.failing, report)
        kept: list[FailingTest] = []
        for failure in report.failures:
            mine = failure.test_id not in self.failing or failure.test_id in targets
            (kept if mine else report.old).append(failure)
        report.failures = kept
        return report


def fixed(old: tuple[str, ...], report: TestReport) -> list[str]:
    """The old failures `report` shows passing: by id, or by the id a runner gives a passing
    test when it prints no location for it (node 20's `add` for `test/calc.test.js > add`),
    when nothing in the run by that id failed."""
    passing = set(report.passing)
    failing = {f.test_id for f in report.failures}
    return [i for i in old if i in passing or (i not in failing and node.unlocated(i) in passing)]


def _one_line(message: str) -> str:
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return first[:160]


def start_problem(report: TestReport, pytest: bool) -> str | None:
    """Why this run on the starting commit shows the suite cannot run at all (None: it ran).
    Failing tests are fine (they are the baseline); no test running is not."""
    if report.timed_out:
        return f"it did not finish within the test timeout ({report.summary()})"
    if report.exit_code is not None and report.exit_code < 0:
        return f"it was {report.summary()}"
    if report.exit_code in (126, 127):
        return "its program could not be started"
    toolchain = _toolchain(report)
    if toolchain is not None:
        return f"{toolchain.what} (`{toolchain.line}`)"
    runner = pytest_runner if pytest else runner_for(report.command)
    said = runner.start_problem(report) if runner is not None else None
    return said or runner_crash(report)  # the runner's own words first


def _toolchain(report: TestReport) -> ToolchainProblem | None:
    """The toolchain's problem, when the run failed before any test ran because of it."""
    if report.exit_code == 0 or report.passed + report.failed + report.errors:
        return None
    return toolchain_problem(report.output_tail)


def _hidden_program(command: str, report: TestReport) -> str:
    """A sentence when the program that was not found exists on this machine: the sandbox does
    not show the folder it lives in."""
    if report.exit_code not in (126, 127):
        return ""
    program = first_program(command)
    if program and program.startswith("/") and Path(program).exists():
        return (
            f"\n\n`{program}` exists on this machine but not inside the sandbox, which shows "
            "only some folders (docs/sandbox.md#the-local-sandbox-bubblewrap): activate that "
            "environment (VIRTUAL_ENV), or run the tests uncontained with --sandbox none."
        )
    return ""


def start_failure_message(command: str, problem: str, report: TestReport) -> str:
    """What the user reads when the suite cannot run: which command, its last lines, what to do
    (in the words of the command's runner: no pytest advice for a project that runs unittest)."""
    tail = tail_lines(report.output_tail, BAD_START_LINES) or "(no output)"
    if report.timed_out:  # the suite runs, only longer than the setting allows
        return (
            f"The tests on the starting commit ran out of time, so no step could be verified: "
            f"`{command}`: {problem}.\n\nIts last lines:\n{tail}\n\nWhat to do: raise "
            "test_timeout to wait longer (--test-timeout, TUI_ENGINEER_TEST_TIMEOUT or "
            "test_timeout in .tui-engineer.toml), narrow test_command to run fewer tests "
            "(--test-cmd), or work without tests with --unverified."
        )
    toolchain = _toolchain(report)
    if toolchain is not None:  # no test command or install advice: the toolchain's own fix
        return (
            f"The tests cannot run on the starting commit, so no step could be verified: "
            f"`{command}`: {problem}.\n\nIts last lines:\n{tail}\n\nWhat to do: "
            f"{toolchain.fix}."
        )
    return (
        f"The tests cannot run on the starting commit, so no step could be verified: "
        f"`{command}`: {problem}.\n\nIts last lines:\n{tail}{_hidden_program(command, report)}\n\n"
        "What to do: set test_command to a command that runs your tests (--test-cmd, or "
        f"test_command in .tui-engineer.toml), {_environment_advice(command)}, or work without "
        "tests with --unverified."
    )


def _environment_advice(command: str) -> str:
    runner = runner_name(command)
    program = Path((words(last_command(command)) or [""])[0]).name
    if not (program.startswith("python") or runner in ("pytest", "unittest")):
        return f"make sure {runner} is installed and on PATH where tui-engineer starts"
    active = os.environ.get("VIRTUAL_ENV")
    if not active:
        return (
            "activate the project's virtualenv before starting tui-engineer so that "
            f"{runner} and the project's packages are found"
        )
    return f"make sure {runner} runs in the active virtualenv ({active})"


def _cache_file(root: Path, command: str, tree: str) -> Path:
    key = sha1(f"{root.resolve()}\0{command}".encode()).hexdigest()[:12]
    return platformdirs.user_cache_path("tui-engineer") / "baseline" / f"{key}-{tree}.json"


def recorded(root: Path, command: str, tree: str) -> Baseline | None:
    """The baseline kept for this tree and command, if any."""
    try:
        data = json.loads(_cache_file(root, command, tree).read_text(encoding="utf-8"))
        passing, failing = frozenset(data["passing"]), tuple(data["failing"])
        lines = tuple((str(i), str(m)) for i, m in data.get("lines", ()))
        return Baseline(command, passing, failing, lines, bool(data.get("unreadable")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record(root: Path, tree: str, baseline: Baseline) -> None:
    path = _cache_file(root, baseline.command, tree)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(baseline.to_dict()), encoding="utf-8")
    except OSError:
        pass  # a cache: the next session runs the suite again
