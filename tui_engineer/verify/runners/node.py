"""node's built-in test runner (`node --test`, directly or as the package's test script): read
from its TAP report (the default when output is not a terminal) or its spec report. Narrowed to
the test files that changed or are named for a changed module (`src/greet.js` →
`test/greet.test.js`), when the command has options only (file arguments added run just those
files); a test-first step's new test files are passed the same way.

Test ids are `file > suite > test`, as the runner names them: `test/greet.test.js > greet >
says hello`. Passing tests are recorded too, so that a baseline can tell an old failure that now
passes; node 20 prints no location for a passing test, so its id lacks the file then
(`greet > says hello`), and `unlocated` gives the id a failing test has without it."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.shell_command import words
from tui_engineer.verify.runner_result import (
    MESSAGE_CHARS,
    Failure,
    RunnerResult,
    relative,
    trim_lines,
)
from tui_engineer.verify.runners.base import no_old_lines, no_start_problem, shows_a_result
from tui_engineer.verify.runners.package_json import (
    NPM_RUNNERS,
    is_npm_test,
    test_script,
    with_script_args,
)

name = "node --test"


def _node_test(tokens: list[str]) -> bool:
    """`node --test` with options only: file arguments added run just those files."""
    return tokens[:2] == ["node", "--test"] and all(t.startswith("-") for t in tokens[2:])


def claims(command: str, root: Path | None = None) -> bool:
    """`node --test …`, or the package's test script when that is `node --test`."""
    tokens = words(command)
    if tokens[:2] == ["node", "--test"]:
        return True
    npm = len(tokens) >= 2 and tokens[0] in NPM_RUNNERS and tokens[1] in ("test", "t")
    return npm and test_script(root)[:2] == ["node", "--test"]


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    return command  # its TAP report goes to the output as it is


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None


def read(output: str, root: Path | None) -> RunnerResult | None:
    return _tap(output, root) or _spec(output, root)


def _message(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:MESSAGE_CHARS]


# --- TAP ---------------------------------------------------------------------------------------

_TAP_COUNT = re.compile(r"^# (pass|fail|skipped|todo|cancelled) (\d+)$", re.M)
_TAP_LINE = re.compile(r"^( *)(not ok|ok) \d+ - (.*?)(?: # (SKIP|TODO).*)?$")
_TAP_SUBTEST = re.compile(r"^( *)# Subtest: (.*)$")


def _tap(output: str, root: Path | None) -> RunnerResult | None:
    counts = dict(_TAP_COUNT.findall(output))
    if "TAP version" not in output or "pass" not in counts:
        return None
    result = RunnerResult("node")
    result.passed = int(counts["pass"])
    result.failed = int(counts.get("fail", 0)) + int(counts.get("cancelled", 0))
    result.skipped = int(counts.get("skipped", 0)) + int(counts.get("todo", 0))
    lines = output.splitlines()
    suites: list[tuple[int, str]] = []  # (indent, name) of the subtests we are inside
    passing: list[str] = []
    for index, line in enumerate(lines):
        if found := _TAP_SUBTEST.match(line):
            indent = len(found.group(1))
            suites = [s for s in suites if s[0] < indent] + [(indent, found.group(2))]
            continue
        found = _TAP_LINE.match(line)
        if found is None:
            continue
        indent, name = len(found.group(1)), found.group(3)
        yaml = _tap_yaml(lines, index + 1)
        parents = [s[1] for s in suites if s[0] < indent]
        where = re.search(r"location: '(.+?):\d+:\d+'", yaml)
        file = [relative(where.group(1), root)] if where else []
        test_id = " > ".join([*file, *parents, name])
        if found.group(2) == "ok":
            if not found.group(4) and not _has_subtests(lines, index, indent):
                passing.append(test_id)  # a test, not a suite nor a skipped or todo one
        elif "failureType: 'subtestsFailed'" not in yaml:
            # (a suite failing because a test in it failed is not listed: the test is)
            result.failures.append(Failure(test_id, _tap_error(yaml), yaml))
    failing = {f.test_id for f in result.failures}
    result.passing = [t for t in dict.fromkeys(passing) if t not in failing]
    return result


def _has_subtests(lines: list[str], index: int, indent: int) -> bool:
    """Did the `ok` line at `index` close a suite (deeper subtests just before it)?"""
    for line in reversed(lines[:index]):
        found = _TAP_LINE.match(line)
        if found is not None:
            return len(found.group(1)) > indent
        if _TAP_SUBTEST.match(line) and len(line) - len(line.lstrip()) <= indent:
            return False
    return False


def unlocated(test_id: str) -> str:
    """`test/calc.test.js > add` → `add`: the id node 20 gives the test when it passes."""
    head, separator, rest = test_id.partition(" > ")
    return rest if separator and head.endswith((".js", ".cjs", ".mjs")) else test_id


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


# --- spec --------------------------------------------------------------------------------------

_SPEC_COUNT = re.compile(r"^ℹ (pass|fail|skipped|todo|cancelled) (\d+)$", re.M)
_SPEC_FAIL = re.compile(r"^✖ (.*?)(?: \([\d.]+m?s\))?$")
_SPEC_PASS = re.compile(r"^\s*✔ (.*?)(?: \([\d.]+m?s\))?$")


def _spec(output: str, root: Path | None) -> RunnerResult | None:
    counts = dict(_SPEC_COUNT.findall(output))
    if "pass" not in counts:
        return None
    result = RunnerResult("node")
    result.passed = int(counts["pass"])
    result.failed = int(counts.get("fail", 0)) + int(counts.get("cancelled", 0))
    result.skipped = int(counts.get("skipped", 0)) + int(counts.get("todo", 0))
    section = output.split("✖ failing tests:", 1)
    # Passing tests by name, as its failing ones are named apart from their file (`unlocated`).
    passing = [found.group(1) for found in map(_SPEC_PASS.match, section[0].splitlines()) if found]
    result.passing = list(dict.fromkeys(passing))
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


# --- narrowing and test-first ------------------------------------------------------------------


def narrows(command: str, root: Path | None) -> bool:
    tokens = words(command)
    return _node_test(tokens) or (is_npm_test(command) and _node_test(test_script(root)))


def narrowed(
    command: str, changed: Iterable[str], _root: Path, files: Callable[..., list[str]]
) -> str | None:
    """`command` with the test files `changed` can affect; None (run whole) when a changed file
    is not JavaScript (package.json, a fixture, a .ts file: anything may depend on it)."""
    changed = sorted(set(changed))
    if not changed or not all(c.endswith((".js", ".cjs", ".mjs")) for c in changed):
        return None
    tests = tests_for(changed, files())
    if not tests:
        return None
    quoted = " ".join(shlex.quote(t) for t in tests)
    return f"{command} -- {quoted}" if words(command)[0] == "npm" else f"{command} {quoted}"


def tests_for(changed: Iterable[str], files: Iterable[str]) -> list[str]:
    """The test files among `files` that node --test would run for `changed`: changed test
    files, and those named for a changed module (`src/greet.js` → `test/greet.test.js`)."""
    files = list(files)
    tests = [f for f in files if _is_test(f)]
    chosen = {c for c in changed if c in tests}
    stems = {PurePosixPath(c).name.split(".")[0] for c in changed if not _is_test(c)}
    chosen |= {t for t in tests if PurePosixPath(t).name.split(".")[0] in stems}
    return sorted(chosen)


def _is_test(path: str) -> bool:
    """node --test's default patterns: *.test.js, *-test.js, *_test.js, test.js, and any
    .js/.cjs/.mjs file under a test/ folder."""
    pure = PurePosixPath(path)
    if pure.suffix not in (".js", ".cjs", ".mjs") or "node_modules" in pure.parts:
        return False
    stem = pure.name[: -len(pure.suffix)]
    return "test" in pure.parts[:-1] or stem == "test" or stem.endswith((".test", "-test", "_test"))


def files_command(command: str, root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test files `files` (a test-first step's new tests)."""
    quoted = " ".join(shlex.quote(f) for f in files)
    if not quoted or not words(command):
        return None
    if words(command)[:2] == ["node", "--test"]:
        return f"{command} {quoted}"
    if is_npm_test(command) and test_script(root)[:2] == ["node", "--test"]:
        return with_script_args(command, quoted)
    return None


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"(?:not )?ok \d+ .*"  # TAP (node --test, older; other TAP runners)
    r"|[✔✖✓✗] .*"  # the spec reporter
)


started = shows_a_result(STARTED)
start_problem = no_start_problem
old_lines = no_old_lines
