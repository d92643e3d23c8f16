"""cargo test, run with `--no-fail-fast`: by default cargo stops at the first test binary that
fails (the library's unit tests, say), so the tests of the binaries after it never run, and an
old failure there looks new as soon as the first binary passes. Read from each binary's
`test result:` line, its `test name ... ok|FAILED` lines and the `---- name stdout ----` block
each failing test prints (its panic). Narrowed by name filters of the changed modules
(`src/parse/lexer.rs` → `cargo test -- parse::lexer::`)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.shell_command import words
from tui_engineer.verify.runner_result import MESSAGE_CHARS, Failure, RunnerResult, trim_lines
from tui_engineer.verify.runners.base import no_old_lines, no_start_problem, shows_a_result

name = "cargo test"

_FLAG = "--no-fail-fast"
_RESULT = re.compile(
    r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; \d+ measured", re.M
)
_FAILED = re.compile(r"^test (.+?) \.\.\. FAILED$", re.M)
_OK = re.compile(r"^test (.+?) \.\.\. ok$", re.M)
_BLOCK = re.compile(r"^---- (.+?) stdout ----$", re.M)


def claims(command: str, _root: Path | None = None) -> bool:
    return words(command)[:2] == ["cargo", "test"]


def report_command(command: str, _report: Path | None = None, _root: Path | None = None) -> str:
    """`cargo test … --no-fail-fast`, before the `--` that starts libtest's own arguments."""
    tokens = words(command)
    if tokens[:2] != ["cargo", "test"] or _FLAG in tokens:
        return command
    head, separator, tail = command.partition(" -- ")
    if separator:
        return f"{head} {_FLAG} -- {tail}"
    if command.rstrip().endswith(" --"):
        return f"{command.rstrip()[:-3]} {_FLAG} --"
    return f"{command} {_FLAG}"


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None  # read from its output


def read(output: str, _root: Path | None) -> RunnerResult | None:
    results = _RESULT.findall(output)
    names = _FAILED.findall(output)
    if not results and not names:
        return None
    result = RunnerResult("cargo")
    for passed, failed, ignored in results:
        result.passed += int(passed)
        result.failed += int(failed)
        result.skipped += int(ignored)
    blocks = _blocks(output)
    for test in dict.fromkeys(names):
        details = blocks.get(test, "")
        result.failures.append(Failure(test, _message(details), details))
    result.passing = [t for t in dict.fromkeys(_OK.findall(output)) if t not in names]
    # A binary cut short (a crash, the output cap) has FAILED lines but no result line.
    result.failed = max(result.failed, len(result.failures))
    return result


def _blocks(output: str) -> dict[str, str]:
    """The `---- name stdout ----` sections: what each failing test printed (its panic)."""
    blocks: dict[str, str] = {}
    marks = list(_BLOCK.finditer(output))
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(output)
        body = output[mark.end() : end]
        cut = re.search(r"^failures:$|^test result:", body, re.M)
        lines = (body[: cut.start()] if cut else body).strip("\n").splitlines()
        blocks[mark.group(1)] = trim_lines(lines)
    return blocks


def _message(details: str) -> str:
    """The panic's message: the lines after `panicked at file:line:col:`."""
    lines = details.splitlines()
    for index, line in enumerate(lines):
        if " panicked at " in line:
            rest = [ln.strip() for ln in lines[index + 1 : index + 4] if ln.strip()]
            rest = [ln for ln in rest if not ln.startswith(("stack backtrace", "note:"))]
            return " ".join(rest)[:MESSAGE_CHARS] or _first(line)
    return _first(details)


def _first(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:MESSAGE_CHARS]


def narrows(command: str, _root: Path | None) -> bool:
    return claims(command)


def narrowed(
    command: str, changed: Iterable[str], _root: Path, _files: Callable[..., list[str]]
) -> str | None:
    """Name filters of the changed modules: `src/parse/lexer.rs` → `parse::lexer::`. A change
    anywhere else (the crate root, Cargo.toml, tests/, build.rs) can affect any test."""
    changed = sorted(set(changed))
    if not changed:
        return None
    filters = []
    for path in changed:
        pure = PurePosixPath(path)
        if pure.suffix != ".rs" or pure.parts[0] != "src" or len(pure.parts) < 2:
            return None
        parts = list(pure.with_suffix("").parts[1:])
        if parts[-1] == "mod":
            parts = parts[:-1]
        if not parts or parts in (["lib"], ["main"]):
            return None
        filters.append("::".join(parts) + "::")
    if "--" in words(command):
        return None  # the user's own libtest arguments: leave them alone
    return f"{command} -- {' '.join(shlex.quote(f) for f in sorted(set(filters)))}"


def files_command(_command: str, _root: Path, _files: Iterable[str]) -> str | None:
    return None  # tests are named by filters, not files: a test-first step runs it whole


# A line of its output that shows a test's result (verify/started.py: the suite has started).
STARTED = re.compile(
    r"running \d+ tests?"  # per binary
    r"|test \S+ \.\.\. (?:ok|FAILED|ignored)"
)


started = shows_a_result(STARTED)
start_problem = no_start_problem
old_lines = no_old_lines
