"""jest: read from its JSON report. A jest command gets `--json --outputFile=<file>` (outside the
worktree, like pytest's JUnit file), as `npm test` does when the package's test script runs jest
(`npm test -- …`, `yarn test …`, `pnpm test …` pass them on). Narrowed with
`--findRelatedTests <changed files>` (jest follows the imports itself); a test-first step's new
test files are passed as arguments."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path

from tui_engineer.base.shell_command import words
from tui_engineer.verify.runner_result import (
    MESSAGE_CHARS,
    Failure,
    RunnerResult,
    relative,
    trim_lines,
)
from tui_engineer.verify.runners.base import no_old_lines, no_start_problem, shows_a_result
from tui_engineer.verify.runners.package_json import is_npm_test, test_script, with_script_args

name = "jest"

_NPM_TEST = (("npm", "test"), ("npm", "t"), ("npm", "run", "test"))


def _direct(tokens: list[str]) -> bool:
    """jest itself: `jest`, `node_modules/.bin/jest`, `npx jest`, `npx --no-install jest`."""
    if tokens and Path(tokens[0]).name == "jest":
        return True
    return tokens[:2] == ["npx", "jest"] or tokens[:3] == ["npx", "--no-install", "jest"]


def _script_runs_jest(root: Path | None) -> bool:
    script = test_script(root)
    return bool(script) and Path(script[0]).name == "jest"


def claims(command: str, root: Path | None = None) -> bool:
    """jest, or the package's test script when that runs jest."""
    tokens = words(command)
    if _direct(tokens):
        return True
    npm = any(tuple(tokens[: len(p)]) == p for p in _NPM_TEST)
    npm = npm or tokens[:2] in (["yarn", "test"], ["pnpm", "test"])
    return npm and _script_runs_jest(root)


def report_command(command: str, report: Path | None = None, root: Path | None = None) -> str:
    """`command` asking jest for its JSON report at `report` (as it is without one)."""
    if report is None or not claims(command, root):
        return command
    tokens = words(command)
    extra = f"--json --outputFile={shlex.quote(str(report))}"
    if _direct(tokens) or tokens[0] in ("yarn", "pnpm"):
        return f"{command} {extra}"  # yarn and pnpm pass arguments on to the script as they are
    return f"{command} {extra}" if "--" in tokens else f"{command} -- {extra}"


def read(_output: str, _root: Path | None) -> RunnerResult | None:
    return None  # jest is read from its JSON report (`read_report`)


def read_report(report: Path, root: Path | None) -> RunnerResult | None:
    """Counts and failures from jest's JSON file, when it wrote one."""
    try:
        text = report.read_text(encoding="utf-8")
    except OSError:
        return None
    return parse_json(text, root)


def parse_json(text: str, root: Path | None = None) -> RunnerResult | None:
    """jest's JSON report (`--json --outputFile=…`); None when it is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or "testResults" not in data:
        return None
    result = RunnerResult("jest")
    result.passed = int(data.get("numPassedTests", 0))
    result.failed = int(data.get("numFailedTests", 0))
    result.skipped = int(data.get("numPendingTests", 0)) + int(data.get("numTodoTests", 0))
    for suite in data.get("testResults", []):
        file = relative(str(suite.get("name", "")), root)
        cases = suite.get("assertionResults") or []
        for case in cases:
            if case.get("status") != "failed":
                continue
            names = [*case.get("ancestorTitles", []), case.get("title", "")]
            details = "\n".join(case.get("failureMessages") or [])
            result.failures.append(
                Failure(
                    " > ".join([file, *names]), _message(details), trim_lines(details.splitlines())
                )
            )
        if suite.get("status") == "failed" and not cases:
            # The file could not run at all (a syntax error, a missing module).
            details = str(suite.get("message", ""))
            result.errors += 1
            result.failures.append(
                Failure(file, _message(details), trim_lines(details.splitlines()))
            )
    return result


def _message(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:MESSAGE_CHARS]


def narrows(command: str, root: Path | None) -> bool:
    """jest itself, or `npm test` (no arguments) whose script starts with `jest`."""
    script = test_script(root)
    return _direct_narrowable(words(command)) or (is_npm_test(command) and script[:1] == ["jest"])


def _direct_narrowable(tokens: list[str]) -> bool:
    return tokens[:1] == ["jest"] or tokens[:2] == ["npx", "jest"]


def narrowed(
    command: str, changed: Iterable[str], _root: Path, _files: Callable[..., list[str]]
) -> str | None:
    """`command --findRelatedTests <changed files>`."""
    changed = sorted(set(changed))
    if not changed:
        return None
    files = " ".join(shlex.quote(c) for c in changed)
    separator = " --" if words(command)[0] == "npm" else ""  # yarn, pnpm pass args on
    return f"{command}{separator} --findRelatedTests {files}"


def files_command(command: str, root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test files `files` (a test-first step's new tests)."""
    quoted = " ".join(shlex.quote(f) for f in files)
    if not quoted or not words(command):
        return None
    if _direct_narrowable(words(command)):
        return f"{command} {quoted}"
    if is_npm_test(command) and test_script(root)[:1] == ["jest"]:
        return with_script_args(command, quoted)
    return None


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"[✔✖✓✗] .*"
    r"|(?:PASS|FAIL) \S+.*"  # its line per file
)


started = shows_a_result(STARTED)
start_problem = no_start_problem
old_lines = no_old_lines
