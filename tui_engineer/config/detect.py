"""Guess the test command of a repository from a few cheap, bounded looks."""

from __future__ import annotations

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


def detect_test_command(repo_root: Path) -> tuple[str, str] | None:
    """("python -m pytest", reason) when the repo looks like it uses pytest, else None."""
    checks: list[Callable[[Path], str | None]] = [_pytest_config, _test_folder, _test_files]
    for check in checks:
        reason = check(repo_root)
        if reason:
            return PYTEST, reason
    return None


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
