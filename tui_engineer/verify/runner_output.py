"""Counts and failing test names from the output of test runners other than pytest: cargo test,
node's built-in test runner (TAP or spec reporter), `go test -json` (and `go test -v`), jest's
JSON report, Catch2's console report (runner_catch.py), and those of the runners with a module
of their own (verify/runners/: cargo, unittest). The runner is recognised by its
output, not by the command, so `npm test`, `make test` or a script that runs one of them is read
as well.

Test ids are what the runner calls a test, so a user can find it and the runner can be told to
run it: `tests::adds` (cargo), `test/greet.test.js > suite > name` (node, jest),
`example.com/calc::TestAdd/sub` (go)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from tui_engineer.shell_command import words
from tui_engineer.verify.runner_catch import parse_catch2
from tui_engineer.verify.runner_result import (
    MESSAGE_CHARS,
    Failure,
    RunnerResult,
    relative,
    trim_lines,
)
from tui_engineer.verify.runners import cargo, unittest


def parse_runner_output(output: str, root: Path | None = None) -> RunnerResult | None:
    """The result the output shows, or None when no known runner's summary is in it."""
    parsers: list[Callable[[str, Path | None], RunnerResult | None]] = [
        _go_json,
        cargo.read,
        _node_tap,
        _node_spec,
        _go_verbose,
        parse_catch2,
        unittest.read,
    ]
    for parse in parsers:
        result = parse(output, root)
        if result is not None:
            return result
    return None


def _message(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:MESSAGE_CHARS]


# --- node --test: TAP (the default when output is not a terminal) and spec ------------------

_TAP_COUNT = re.compile(r"^# (pass|fail|skipped|todo|cancelled) (\d+)$", re.M)
_TAP_LINE = re.compile(r"^( *)(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO).*)?$")
_TAP_SUBTEST = re.compile(r"^( *)# Subtest: (.*)$")


def _node_tap(output: str, root: Path | None) -> RunnerResult | None:
    counts = dict(_TAP_COUNT.findall(output))
    if "TAP version" not in output or "pass" not in counts:
        return None
    result = RunnerResult("node")
    result.passed = int(counts["pass"])
    result.failed = int(counts.get("fail", 0)) + int(counts.get("cancelled", 0))
    result.skipped = int(counts.get("skipped", 0)) + int(counts.get("todo", 0))
    lines = output.splitlines()
    suites: list[tuple[int, str]] = []  # (indent, name) of the subtests we are inside
    for index, line in enumerate(lines):
        if found := _TAP_SUBTEST.match(line):
            indent = len(found.group(1))
            suites = [s for s in suites if s[0] < indent] + [(indent, found.group(2))]
            continue
        found = _TAP_LINE.match(line)
        if found is None or found.group(2) != "not ok":
            continue
        indent, name = len(found.group(1)), found.group(3)
        yaml = _tap_yaml(lines, index + 1)
        if "failureType: 'subtestsFailed'" in yaml:
            continue  # a suite failing because a test in it failed: the test is listed
        parents = [s[1] for s in suites if s[0] < indent]
        where = re.search(r"location: '(.+?):\d+:\d+'", yaml)
        file = [relative(where.group(1), root)] if where else []
        test_id = " > ".join([*file, *parents, name])
        result.failures.append(Failure(test_id, _tap_error(yaml), yaml))
    return result


def _tap_yaml(lines: list[str], start: int) -> str:
    """The `---` … `...` block after a result line."""
    if start >= len(lines) or lines[start].strip() != "---":
        return ""
    block: list[str] = []
    for line in lines[start + 1 :]:
        if line.strip() == "...":
            break
        block.append(line.strip("\n"))
    indent = min((len(ln) - len(ln.lstrip()) for ln in block if ln.strip()), default=0)
    return trim_lines([ln[indent:] for ln in block])


def _tap_error(yaml: str) -> str:
    found = re.search(r"^error: (?:\|-\n)?(.*?)(?=^\w+:|\Z)", yaml, re.M | re.S)
    if not found:
        return ""
    text = found.group(1).strip().strip("'")
    return " ".join(ln.strip() for ln in text.splitlines() if ln.strip())[:MESSAGE_CHARS]


_SPEC_COUNT = re.compile(r"^ℹ (pass|fail|skipped|todo|cancelled) (\d+)$", re.M)
_SPEC_FAIL = re.compile(r"^✖ (.*?)(?: \([\d.]+m?s\))?$")


def _node_spec(output: str, root: Path | None) -> RunnerResult | None:
    counts = dict(_SPEC_COUNT.findall(output))
    if "pass" not in counts:
        return None
    result = RunnerResult("node")
    result.passed = int(counts["pass"])
    result.failed = int(counts.get("fail", 0)) + int(counts.get("cancelled", 0))
    result.skipped = int(counts.get("skipped", 0)) + int(counts.get("todo", 0))
    section = output.split("✖ failing tests:", 1)
    if len(section) < 2:
        return result
    lines = section[1].splitlines()
    for index, line in enumerate(lines):
        found = _SPEC_FAIL.match(line)
        if not found:
            continue
        where = re.match(r"test at (.+?):\d+:\d+$", lines[index - 1]) if index else None
        file = [relative(where.group(1), root)] if where else []
        details = []
        for more in lines[index + 1 :]:
            if more and not more.startswith(" "):
                break
            details.append(more)
        test_id = " > ".join([*file, found.group(1)])
        result.failures.append(Failure(test_id, _message("\n".join(details)), trim_lines(details)))
    return result


# --- go test -json, and go test -v --------------------------------------------------------------


def _go_json(output: str, _root: Path | None) -> RunnerResult | None:
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
    return _go_result(outcome, printed)


def _go_result(
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
                Failure(f"{key[0]}::{key[1]}", _go_message(lines), trim_lines(lines))
            )
    for (pkg, name), action in sorted(outcome.items()):
        failed_tests = any(k[0] == pkg and outcome[k] == "fail" for k in tests)
        if not name and action == "fail" and not failed_tests:
            # The package failed with no test failing: it did not build, or crashed.
            lines = printed.get((pkg, ""), [])
            result.errors += 1
            result.failures.append(Failure(pkg, _go_message(lines), trim_lines(lines)))
    return result


def _go_message(lines: list[str]) -> str:
    skip = ("===", "---", "#", "FAIL")  # go's own framing: runs, results, package headers
    useful = [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith(skip)]
    return (useful[0] if useful else "")[:MESSAGE_CHARS]


_GO_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(")
_GO_PACKAGE = re.compile(r"^(ok|FAIL|\?)\s+(\S+)\s")


_GO_RUN = re.compile(r"^=== (?:RUN|CONT|PAUSE|NAME)\s+(\S+)")


def _go_verbose(output: str, _root: Path | None) -> RunnerResult | None:
    """Plain `go test` output: `--- FAIL: TestX (0.00s)` lines (every test's with -v). A test's
    own lines follow its result line, indented; with -v they stream under `=== RUN` instead."""
    lines = output.splitlines()
    if not any(_GO_RESULT.match(line) for line in lines):
        return None
    outcome: dict[tuple[str, str], str] = {}
    printed: dict[tuple[str, str], list[str]] = {}
    pending: list[tuple[str, list[str]]] = []  # tests of the package being printed
    streamed: dict[str, list[str]] = {}  # -v: what each test printed while it ran
    running = ""
    for index, line in enumerate(lines):
        if found := _GO_RUN.match(line):
            running = found.group(1)
        elif found := _GO_RESULT.match(line):
            status, name = found.group(2), found.group(3)
            body = []
            for more in lines[index + 1 :]:
                if not more.startswith(found.group(1) + "    ") or _GO_RESULT.match(more):
                    break
                body.append(more.strip())
            pending.append((name, [status, *(body or streamed.get(name, []))]))
            running = ""
        elif found := _GO_PACKAGE.match(line):
            for name, (status, *body) in pending:
                key = (found.group(2), name)
                outcome[key] = {"PASS": "pass", "FAIL": "fail", "SKIP": "skip"}[status]
                printed[key] = body
            pending, streamed, running = [], {}, ""
        elif running and line.startswith("    ") and line.strip():
            streamed.setdefault(running, []).append(line.strip())
    for name, (status, *body) in pending:  # output cut before the package line
        outcome[("", name)] = {"PASS": "pass", "FAIL": "fail", "SKIP": "skip"}[status]
        printed[("", name)] = body
    return _go_result(outcome, printed)


def with_go_verbose(command: str) -> str:
    """`go test …` with -v, so every test's result is printed (plain `go test` prints only the
    failures, and passing runs would have no counts); other commands, or one with -v or -json
    already, as they are."""
    tokens = words(command)
    if tokens[:2] != ["go", "test"] or {"-v", "-json", "-v=true"} & set(tokens):
        return command
    return re.sub(r"(^|\s)go\s+test(\s|$)", r"\1go test -v\2", command, count=1)


# --- jest --json --outputFile --------------------------------------------------------------------


def parse_jest_json(text: str, root: Path | None = None) -> RunnerResult | None:
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
