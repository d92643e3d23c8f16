"""Guess the test command of a repository from a few cheap, bounded looks: pytest's own config
first, then a Rust crate, a Go module, a JavaScript package's `test` script, then Python test
files, then a Makefile's `test` target."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections import deque
from collections.abc import Callable
from pathlib import Path

PYTEST = "python -m pytest"
# Folders that hold other people's code or build output: never evidence of the repo's tests.
SKIP_DIRS = frozenset(
    {"node_modules", "venv", "env", "site-packages", "__pycache__", "build", "dist", "target"}
)
MAX_DEPTH = 3  # levels below the root searched for test files
MAX_ENTRIES = 5000  # directory entries looked at in total: detection stays fast on huge repos


# npm's placeholder for a package without tests: `npm init` writes it.
_NPM_NO_TESTS = "no test specified"
# A repository's own virtualenv, used when none is active: its pytest and packages are there.
_REPO_VENVS = (".venv", "venv")


def detect_test_command(repo_root: Path, *, repo_venv: bool = True) -> tuple[str, str] | None:
    """(command, reason) for the repo's tests, else None. `repo_venv`: pytest may run from the
    repository's own .venv (not in a container: a host's venv does not run there)."""
    checks: list[Callable[[Path], tuple[str, str] | None]] = [
        _pytest(_pytest_config, repo_venv),
        _cargo,
        _go,
        _package_json,
        _pytest(_test_folder, repo_venv),
        _pytest(_test_files, repo_venv),
        _makefile,
    ]
    for check in checks:
        found = check(repo_root)
        if found:
            return found
    return None


def _pytest(
    check: Callable[[Path], str | None], repo_venv: bool
) -> Callable[[Path], tuple[str, str] | None]:
    def found(root: Path) -> tuple[str, str] | None:
        reason = check(root)
        if not reason:
            return None
        venv = _repo_venv(root) if repo_venv else None
        if venv is None:
            return PYTEST, reason
        return f"{venv}/bin/python -m pytest", f"{reason}; the repository's own {venv}/"

    return found


def _repo_venv(root: Path) -> str | None:
    """The repository's own venv folder when no virtualenv is active (an active one is on PATH
    and is the environment the user chose)."""
    if os.environ.get("VIRTUAL_ENV"):
        return None
    for name in _REPO_VENVS:
        if (root / name / "pyvenv.cfg").is_file() and (root / name / "bin" / "python").exists():
            return name
    return None


def _cargo(root: Path) -> tuple[str, str] | None:
    return ("cargo test", "Cargo.toml") if (root / "Cargo.toml").is_file() else None


def _go(root: Path) -> tuple[str, str] | None:
    return ("go test ./...", "go.mod") if (root / "go.mod").is_file() else None


def _package_json(root: Path) -> tuple[str, str] | None:
    try:
        data = json.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if not isinstance(script, str) or not script.strip() or _NPM_NO_TESTS in script:
        return None
    for lockfile, tool in (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn")):
        if (root / lockfile).is_file():
            return f"{tool} test", f"scripts.test in package.json, {lockfile}"
    return "npm test", "scripts.test in package.json"


def _makefile(root: Path) -> tuple[str, str] | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if _has_make_target(root / name, "test"):
            return "make test", f"a test target in {name}"
    return None


def _has_make_target(path: Path, target: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    # `test:` or `check test: …`, not `test := value` (a variable).
    names = rf"^(?:[^\s:#=]+[ \t]+)*{re.escape(target)}(?:[ \t]+[^\s:#=]+)*[ \t]*:(?!=)"
    return re.search(names, text, re.MULTILINE) is not None


def _pytest_config(root: Path) -> str | None:
    if (root / "pytest.ini").is_file():
        return "pytest.ini"
    if _pyproject_has_pytest(root / "pyproject.toml"):
        return "[tool.pytest.ini_options] in pyproject.toml"
    if _has_section(root / "tox.ini", "pytest"):
        return "[pytest] in tox.ini"
    if _has_section(root / "setup.cfg", "tool:pytest"):
        return "[tool:pytest] in setup.cfg"
    if (root / "conftest.py").is_file():
        return "conftest.py"
    return None


def _pyproject_has_pytest(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # detection is best effort; load_settings reports a broken pyproject
    tool = data.get("tool", {})
    return isinstance(tool, dict) and "ini_options" in (tool.get("pytest") or {})


def _has_section(path: Path, section: str) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(rf"^\s*\[{re.escape(section)}\]\s*$", text, re.MULTILINE) is not None


def _test_folder(root: Path) -> str | None:
    # A tests/ folder counts only with Python in it: a JavaScript repo's test/ is no reason
    # to run pytest.
    for name in ("tests", "test"):
        if (root / name).is_dir() and _find(root / name, _is_python) is not None:
            return f"{name}/ folder"
    return None


def _test_files(root: Path) -> str | None:
    found = _find(root, _is_test_file)
    return f"test files such as {found.relative_to(root).as_posix()}" if found else None


def _is_python(name: str) -> bool:
    return name.endswith(".py")


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _find(top: Path, wanted: Callable[[str], bool]) -> Path | None:
    """Breadth-first search for a file, bounded in depth and entries; symlinks not followed."""
    queue: deque[tuple[Path, int]] = deque([(top, 0)])
    budget = MAX_ENTRIES
    while queue and budget > 0:
        folder, depth = queue.popleft()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name)[:budget]:
            budget -= 1
            if entry.is_file(follow_symlinks=False) and wanted(entry.name):
                return Path(entry.path)
            if depth < MAX_DEPTH and _worth_entering(entry):
                queue.append((Path(entry.path), depth + 1))
    return None


def _worth_entering(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    hidden = name.startswith(".")
    return not hidden and name not in SKIP_DIRS and entry.is_dir(follow_symlinks=False)
