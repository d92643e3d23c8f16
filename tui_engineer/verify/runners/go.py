"""go test: run with `-v` (plain `go test` prints only the failures, and a passing run would
have no counts) unless it asks for `-json`, and read from either report. Narrowed, for
`go test ./...`, to the packages whose .go files changed.

Test ids are `package::Test/subtest`: `example.com/calc::TestAdd/sub`."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.shell_command import words
from tui_engineer.verify.runner_result import MESSAGE_CHARS, Failure, RunnerResult, trim_lines
from tui_engineer.verify.runners.base import no_old_lines, no_start_problem, shows_a_result

name = "go test"


def claims(command: str, _root: Path | None = None) -> bool:
    return words(command)[:2] == ["go", "test"]


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    """`go test …` with -v, so every test's result is printed; other commands, or one with -v
    or -json already, as they are."""
    tokens = words(command)
    if tokens[:2] != ["go", "test"] or {"-v", "-json", "-v=true"} & set(tokens):
        return command
    return re.sub(r"(^|\s)go\s+test(\s|$)", r"\1go test -v\2", command, count=1)


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None


def read(output: str, root: Path | None) -> RunnerResult | None:
    return _json(output, root) or _verbose(output, root)


# --- go test -json ------------------------------------------------------------------------------


def _json(output: str, _root: Path | None) -> RunnerResult | None:
    events = []
    for line in output.splitlines():
        if line.startswith("{") and '"Action"' in line:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    if not events:
        return None
    outcome: dict[tuple[str, str], str] = {}
    printed: dict[tuple[str, str], list[str]] = {}
    for event in events:
        action = event.get("Action")
        if action == "build-output":  # a compiler's message, for the package it belongs to
            package = str(event.get("ImportPath", "")).split(" ")[0]
            printed.setdefault((package, ""), []).append(str(event.get("Output", "")).rstrip("\n"))
            continue
        key = (str(event.get("Package", "")), str(event.get("Test") or ""))
        if action == "output":
            printed.setdefault(key, []).append(str(event.get("Output", "")).rstrip("\n"))
        elif action in ("pass", "fail", "skip"):
            outcome[key] = action
    return _result(outcome, printed)


def _result(
    outcome: dict[tuple[str, str], str], printed: dict[tuple[str, str], list[str]]
) -> RunnerResult:
    result = RunnerResult("go")
    tests = {key for key in outcome if key[1]}
    # A test with subtests passes or fails through them: count the leaves only.
    parents = {(pkg, name.rsplit("/", 1)[0]) for pkg, name in tests if "/" in name}
    for key in sorted(tests - parents):
        action = outcome[key]
        if action == "pass":
            result.passed += 1
            result.passing.append(f"{key[0]}::{key[1]}")
        elif action == "skip":
            result.skipped += 1
        else:
            result.failed += 1
            lines = printed.get(key, [])
            result.failures.append(
                Failure(f"{key[0]}::{key[1]}", _message(lines), trim_lines(lines))
            )
    for (pkg, name), action in sorted(outcome.items()):
        failed_tests = any(k[0] == pkg and outcome[k] == "fail" for k in tests)
        if not name and action == "fail" and not failed_tests:
            # The package failed with no test failing: it did not build, or crashed.
            lines = printed.get((pkg, ""), [])
            result.errors += 1
            result.failures.append(Failure(pkg, _message(lines), trim_lines(lines)))
    return result


def _message(lines: list[str]) -> str:
    skip = ("===", "---", "#", "FAIL")  # go's own framing: runs, results, package headers
    useful = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith(skip)]
    return (useful[0] if useful else "")[:MESSAGE_CHARS]


# --- go test -v (and plain go test) ---------------------------------------------------------------

_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(")
_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s")
_RUN = re.compile(r"^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)")
_ACTIONS = {"PASS": "pass", "FAIL": "fail", "SKIP": "skip"}


def _verbose(output: str, _root: Path | None) -> RunnerResult | None:
    """Plain `go test` output: `--- FAIL: TestX (0.00s)` lines (every test's with -v). A test's
    own lines follow its result line, indented; with -v they stream under `=== RUN` instead."""
    lines = output.splitlines()
    if not any(_RESULT.match(line) for line in lines):
        return None
    outcome: dict[tuple[str, str], str] = {}
    printed: dict[tuple[str, str], list[str]] = {}
    pending: list[tuple[str, list[str]]] = []  # tests of the package being printed
    streamed: dict[str, list[str]] = {}  # -v: what each test printed while it ran
    running = ""
    for index, line in enumerate(lines):
        if found := _RUN.match(line):
            running = found.group(1)
        elif found := _RESULT.match(line):
            status, name = found.group(2), found.group(3)
            body = []
            for more in lines[index + 1 :]:
                if not more.startswith(found.group(1) + "    ") or _RESULT.match(more):
                    break
                body.append(more.strip())
            pending.append((name, [status, *(body or streamed.get(name, []))]))
            running = ""
        elif found := _PACKAGE.match(line):
            for name, (status, *body) in pending:
                key = (found.group(2), name)
                outcome[key] = _ACTIONS[status]
                printed[key] = body
            pending, streamed, running = [], {}, ""
        elif running and line.startswith("    ") and line.strip():
            streamed.setdefault(running, []).append(line.strip())
    for name, (status, *body) in pending:  # output cut before the package line
        outcome[("", name)] = _ACTIONS[status]
        printed[("", name)] = body
    return _result(outcome, printed)


# --- narrowing ---------------------------------------------------------------------------------


def narrows(command: str, _root: Path | None) -> bool:
    tokens = words(command)
    return tokens[:2] == ["go", "test"] and "./..." in tokens


def narrowed(
    command: str, changed: Iterable[str], _root: Path, _files: Callable[..., list[str]]
) -> str | None:
    """The packages (folders) of the changed .go files instead of ./... ; go.mod or other files
    can affect every package."""
    changed = sorted(set(changed))
    if not changed or not all(p.endswith(".go") for p in changed):
        return None
    folders = sorted({str(PurePosixPath(p).parent) for p in changed})
    packages = " ".join(shlex.quote("./" + f) if f != "." else "." for f in folders)
    return command.replace("./...", packages, 1)


def files_command(_command: str, _root: Path, _files: Iterable[str]) -> str | None:
    return None  # go runs packages, not files


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"=== RUN .*|--- (?:PASS|FAIL|SKIP): .*"  # -v
    r"|ok\s+\S+\s+[\d.]+s.*|FAIL\s+\S+\s+[\d.]+s.*"  # a package's line
    r"|\{\"Time\".*\"Action\".*"  # -json
)


started = shows_a_result(STARTED)
start_problem = no_start_problem
old_lines = no_old_lines
