"""The test runners tui-engineer knows by name, one module each (the protocol: base.py). The
registry below is the one list: the sandbox asks it how to run a command (`report_command`),
verify/runner_output.py asks it to read output, and messages name the runner (`runner_name`).

pytest (JUnit XML, verify/report.py), jest (verify/jest.py), node --test and go test
(verify/runner_output.py, verify/narrowing.py) are still read where they were before this
package; they move here one at a time."""

from __future__ import annotations

from pathlib import Path

from tui_engineer.shell_command import last_command, python_module, words
from tui_engineer.verify.runner_result import RunnerResult
from tui_engineer.verify.runners import cargo, unittest
from tui_engineer.verify.runners.base import Runner

RUNNERS: tuple[Runner, ...] = (unittest, cargo)
# Runners read elsewhere, by the name a user knows them by (the first words of their command).
_OTHERS = {
    "pytest": "pytest",
    "py.test": "pytest",
    "jest": "jest",
    "npx": "jest",
    "go": "go test",
    "node": "node --test",
    "npm": "npm test",
    "yarn": "yarn test",
    "pnpm": "pnpm test",
    "make": "make test",
}


def runner_for(command: str) -> Runner | None:
    """The runner module that claims `command`, else None."""
    return next((r for r in RUNNERS if r.claims(command)), None)


def report_command(command: str) -> str:
    """`command` as it is run so that its output can be read test by test."""
    runner = runner_for(command)
    return runner.report_command(command) if runner is not None else command


def read_output(output: str, root: Path | None) -> RunnerResult | None:
    """What a registered runner reads in `output` (whatever the command was)."""
    for runner in RUNNERS:
        found = runner.read(output, root)
        if found is not None:
            return found
    return None


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
