"""The test runners tui-engineer knows by name, one module each (the protocol: base.py). The
registry below is the one list: the sandboxes ask it how to run a command and read its report,
verify/selection.py how to narrow it, the test-first step how to run new test files alone,
messages how to name the runner, and the README's list of runners is checked against it
(tests/verify/test_runner_registry.py).

Order matters only for reading output that no claimed runner read (`read_output`): the first
module whose reader finds its report in the output wins."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tui_engineer.base.shell_command import last_command, python_module, words
from tui_engineer.verify.runner_result import RunnerResult
from tui_engineer.verify.runners import (
    cargo,
    catch2,
    go,
    jest,
    node,
    project_runtests,
    pytest,
    unittest,
    zope_testrunner,
)
from tui_engineer.verify.runners.base import Runner

# A project's runtests.py last: its report is unittest's, read by unittest's module first.
RUNNERS: tuple[Runner, ...] = (
    pytest, cargo, go, jest, node, catch2, zope_testrunner, unittest, project_runtests
)  # fmt: skip

# Commands that run a runner through something else, by the name a user knows them by.
_OTHERS = {
    "py.test": "pytest",
    "npx": "jest",
    "go": "go test",
    "node": "node --test",
    "npm": "npm test",
    "yarn": "yarn test",
    "pnpm": "pnpm test",
    "make": "make test",
}
# Programs whose output we read (or that start a runner we read): a command starting with one
# that cannot be narrowed gets a notice that it runs whole.
_KNOWN_PROGRAMS = frozenset(
    {"cargo", "go", "node", "jest", "npx", "make", "vitest", "npm", "yarn", "pnpm"}
)


def runner_for(command: str, root: Path | None = None) -> Runner | None:
    """The runner module that claims `command`, else None."""
    return next((r for r in RUNNERS if r.claims(command, root)), None)


def report_command(command: str, report: Path | None = None, root: Path | None = None) -> str:
    """`command` as it is run so that its output (or its report at `report`) can be read test
    by test."""
    runner = runner_for(command, root)
    return runner.report_command(command, report, root) if runner is not None else command


def read_output(output: str, root: Path | None) -> RunnerResult | None:
    """What a registered runner reads in `output` (whatever the command was)."""
    for runner in RUNNERS:
        found = runner.read(output, root)
        if found is not None:
            return found
    return None


def read_report(command: str, report: Path, root: Path | None) -> RunnerResult | None:
    """What `command`'s runner reads in the report file it was asked to write, if it wrote one."""
    runner = runner_for(command, root)
    return runner.read_report(report, root) if runner is not None else None


def narrowing_runner(command: str, root: Path | None) -> Runner | None:
    """The runner that can narrow `command` to the tests a change affects, else None."""
    runner = runner_for(command, root)
    return runner if runner is not None and runner.narrows(command, root) else None


def files_command(command: str, root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test files `files`, where its runner takes file arguments."""
    runner = runner_for(command, root)
    return runner.files_command(command, root, files) if runner is not None else None


def known_runner(command: str) -> bool:
    """A test runner we recognise (its results are read), narrowed or not: for the notice."""
    tokens = words(command)
    return bool(tokens) and tokens[0] in _KNOWN_PROGRAMS


def narrowable() -> list[str]:
    """The names of the runners that can be narrowed, for messages and documents."""
    return [r.name for r in RUNNERS if r not in (catch2, zope_testrunner)]


def runner_name(command: str) -> str:
    """What the user calls the runner of `command`: 'pytest', 'unittest', 'cargo test', a
    script (`tests/runtests.py`), or the command's program. Of `cd tests && x`, x's."""
    command = last_command(command)
    runner = runner_for(command)
    if runner is not None:
        return str(runner.name)
    tokens = words(command) or command.split()[:1]
    for prefix in ("uv", "poetry", "pdm", "hatch"):
        if tokens[:2] == [prefix, "run"]:
            tokens = tokens[2:]
    if not tokens:
        return command
    module = python_module(tokens)
    if module is not None:
        return _OTHERS.get(module, module)
    if Path(tokens[0]).name.startswith("python") and len(tokens) > 1:
        return tokens[1]  # a script
    return _OTHERS.get(Path(tokens[0]).name, tokens[0])
