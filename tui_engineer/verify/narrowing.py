"""Affected tests first for runners other than pytest, where the runner can be told which tests
to run: cargo test by name filters (the test paths of the changed modules), jest by
`--findRelatedTests` (jest follows the imports itself), go test by the packages whose files
changed, node --test by the test files changed or named for a changed module. Any other runner
(make test, a script) runs its whole command; the session says so once. The full suite still
runs before a review: narrowing only finds a failure sooner."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.shell_command import words
from tui_engineer.verify.runners import unittest

_NPM_RUNNERS = ("npm", "yarn", "pnpm")
_tokens = words  # the one reading of a command (verify/runners/command.py)


def _test_script(root: Path) -> str:
    try:
        script = json.loads((root / "package.json").read_text(encoding="utf-8"))["scripts"]["test"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return script if isinstance(script, str) else ""


def runner_kind(command: str, root: Path) -> str | None:
    """'cargo', 'jest', 'go', 'node' or 'unittest' for a command that can be narrowed, else
    None (unittest by the test files related to a change: verify/selection.py)."""
    tokens = _tokens(command)
    if unittest.claims(command):
        return "unittest"
    if tokens[:2] == ["cargo", "test"]:
        return "cargo"
    if _node_test(tokens) or (_npm_test(tokens) and _node_test(_test_script(root).split())):
        return "node"
    if tokens[:2] == ["go", "test"] and "./..." in tokens:
        return "go"
    jest_direct = tokens[:1] == ["jest"] or tokens[:2] == ["npx", "jest"]
    npm_test = tokens[:1] and tokens[0] in _NPM_RUNNERS and tokens[1:2] in (["test"], ["t"])
    script = _test_script(root).split()
    if jest_direct or (npm_test and script[:1] == ["jest"] and len(tokens) == 2):
        return "jest"
    return None


_RUNNERS = {"cargo", "go", "node", "jest", "npx", "make", "vitest", *_NPM_RUNNERS}


def _node_test(tokens: list[str]) -> bool:
    """`node --test` with options only: file arguments added run just those files."""
    return tokens[:2] == ["node", "--test"] and all(t.startswith("-") for t in tokens[2:])


def _npm_test(tokens: list[str]) -> bool:
    return len(tokens) == 2 and tokens[0] in _NPM_RUNNERS and tokens[1] in ("test", "t")


def node_tests_for(changed: Iterable[str], files: Iterable[str]) -> list[str]:
    """The test files among `files` that node --test would run for `changed`: changed test
    files, and those named for a changed module (`src/greet.js` → `test/greet.test.js`)."""
    files = list(files)
    tests = [f for f in files if _is_js_test(f)]
    chosen = {c for c in changed if c in tests}
    stems = {PurePosixPath(c).name.split(".")[0] for c in changed if not _is_js_test(c)}
    chosen |= {t for t in tests if PurePosixPath(t).name.split(".")[0] in stems}
    return sorted(chosen)


def _is_js_test(path: str) -> bool:
    """node --test's default patterns: *.test.js, *-test.js, *_test.js, test.js, and any
    .js/.cjs/.mjs file under a test/ folder."""
    pure = PurePosixPath(path)
    if pure.suffix not in (".js", ".cjs", ".mjs") or "node_modules" in pure.parts:
        return False
    stem = pure.name[: -len(pure.suffix)]
    return "test" in pure.parts[:-1] or stem == "test" or stem.endswith((".test", "-test", "_test"))


def known_runner(command: str) -> bool:
    """A test runner we recognise (its results are read), narrowed or not: for the notice."""
    tokens = _tokens(command)
    return bool(tokens) and tokens[0] in _RUNNERS


def narrowed_command(
    kind: str, command: str, changed: Iterable[str], files: Iterable[str] = ()
) -> str | None:
    """`command` running only the tests `changed` files can affect, or None (run it whole).
    `files`: the worktree's files (node --test picks test files among them)."""
    changed = sorted(set(changed))
    if not changed:
        return None
    if kind == "node":
        if not all(c.endswith((".js", ".cjs", ".mjs")) for c in changed):
            return None  # package.json, a fixture, a .ts file: anything may depend on it
        tests = node_tests_for(changed, files)
        quoted = " ".join(shlex.quote(t) for t in tests)
        if not tests:
            return None
        return f"{command} -- {quoted}" if _tokens(command)[0] == "npm" else f"{command} {quoted}"
    if kind == "cargo":
        return _cargo(command, changed)
    if kind == "jest":
        files = " ".join(shlex.quote(c) for c in changed)
        separator = " --" if _tokens(command)[0] == "npm" else ""  # yarn, pnpm pass args on
        return f"{command}{separator} --findRelatedTests {files}"
    if kind == "go":
        return _go(command, changed)
    return None


def _cargo(command: str, changed: list[str]) -> str | None:
    """Name filters of the changed modules: `src/parse/lexer.rs` → `parse::lexer::`. A change
    anywhere else (the crate root, Cargo.toml, tests/, build.rs) can affect any test."""
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
    if "--" in _tokens(command):
        return None  # the user's own libtest arguments: leave them alone
    return f"{command} -- {' '.join(shlex.quote(f) for f in sorted(set(filters)))}"


def _go(command: str, changed: list[str]) -> str | None:
    """The packages (folders) of the changed .go files instead of ./... ; go.mod or other files
    can affect every package."""
    if not all(p.endswith(".go") for p in changed):
        return None
    folders = sorted({str(PurePosixPath(p).parent) for p in changed})
    packages = " ".join(shlex.quote("./" + f) if f != "." else "." for f in folders)
    return command.replace("./...", packages, 1)


def files_command(command: str, root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test files `files`, where the runner takes file arguments
    (node --test, jest, directly or as the package's test script), else None."""
    tokens = _tokens(command)
    quoted = " ".join(shlex.quote(f) for f in files)
    if not tokens or not quoted:
        return None
    if tokens[:2] == ["node", "--test"] or tokens[:1] == ["jest"] or tokens[:2] == ["npx", "jest"]:
        return f"{command} {quoted}"
    script = _test_script(root).split()
    runs_files = script[:2] == ["node", "--test"] or script[:1] == ["jest"]
    if len(tokens) == 2 and tokens[0] in _NPM_RUNNERS and tokens[1] in ("test", "t") and runs_files:
        return f"{command} -- {quoted}" if tokens[0] == "npm" else f"{command} {quoted}"
    return None
