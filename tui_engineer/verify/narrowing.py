"""Affected tests first for runners other than pytest, where the runner can be told which tests
to run: cargo test by name filters (the test paths of the changed modules), jest by
`--findRelatedTests` (jest follows the imports itself), go test by the packages whose files
changed. Any other runner (node --test, make test, a script) runs its whole command; the session
says so once. The full suite still runs before a review: narrowing only finds a failure sooner."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

_NPM_RUNNERS = ("npm", "yarn", "pnpm")
_COMPOUND = {"&&", "||", ";", "|", ">", "<", "&"}


def _tokens(command: str) -> list[str]:
    try:
        tokens = shlex.split(command)
    except ValueError:
        return []
    if any(t in _COMPOUND for t in tokens):
        return []
    while tokens and "=" in tokens[0] and not tokens[0].startswith(("-", "/", ".")):
        tokens = tokens[1:]
    return tokens


def _test_script(root: Path) -> str:
    try:
        script = json.loads((root / "package.json").read_text(encoding="utf-8"))["scripts"]["test"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return script if isinstance(script, str) else ""


def runner_kind(command: str, root: Path) -> str | None:
    """'cargo', 'jest' or 'go' for a command this module can narrow, else None."""
    tokens = _tokens(command)
    if tokens[:2] == ["cargo", "test"]:
        return "cargo"
    if tokens[:2] == ["go", "test"] and "./..." in tokens:
        return "go"
    jest_direct = tokens[:1] == ["jest"] or tokens[:2] == ["npx", "jest"]
    npm_test = tokens[:1] and tokens[0] in _NPM_RUNNERS and tokens[1:2] in (["test"], ["t"])
    script = _test_script(root).split()
    if jest_direct or (npm_test and script[:1] == ["jest"] and len(tokens) == 2):
        return "jest"
    return None


_RUNNERS = {"cargo", "go", "node", "jest", "npx", "make", "vitest", *_NPM_RUNNERS}


def known_runner(command: str) -> bool:
    """A test runner we recognise (its results are read), narrowed or not: for the notice."""
    tokens = _tokens(command)
    return bool(tokens) and tokens[0] in _RUNNERS


def narrowed_command(kind: str, command: str, changed: Iterable[str]) -> str | None:
    """`command` running only the tests `changed` files can affect, or None (run it whole)."""
    changed = sorted(set(changed))
    if not changed:
        return None
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
