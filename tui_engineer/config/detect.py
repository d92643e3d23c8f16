"""Find the test command of a repository from a few cheap, bounded looks, most specific first:
what the project declares for its own tools (tox.ini's commands, a nox session, a pyproject
script, a Makefile test target's one command, a CI workflow's test step: config/tox_ini.py,
config/declared.py, config/nox_and_workflows.py), pytest's own config, a Rust crate, a Go module,
a JavaScript package's `test` script, then Python test files (pytest, or unittest when the tests
are unittest's and the environment has no pytest), then a Makefile's `test` target run whole.
The reason is returned with the command and shown to the user."""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from collections import deque
from collections.abc import Callable
from pathlib import Path

from tui_engineer.base.shell_command import tokens as shell_tokens
from tui_engineer.base.shell_command import words
from tui_engineer.config import declared, nox_and_workflows, tox_ini, tox_setenv, tox_toml

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
    tox = tox_ini.tox(repo_root)
    tox = tox_toml.tox_toml(repo_root) if tox is None else tox  # tox.ini and setup.cfg first
    checks: list[Callable[[Path], tuple[str, str] | None]] = [
        _declared(lambda _root: tox if isinstance(tox, tuple) else None, repo_venv),
        _declared(nox_and_workflows.noxfile, repo_venv),
        _declared(declared.pyproject_script, repo_venv),
        _declared(declared.makefile_recipe, repo_venv),
        _declared(nox_and_workflows.workflows, repo_venv),
        _pytest(_pytest_config, repo_venv),
        _cargo,
        _go,
        _package_json,
        _python(_test_folder, repo_venv),
        _python(_test_files, repo_venv),
        _makefile,
    ]
    for check in checks:
        found = check(repo_root)
        if found:
            return _with_note(found, tox)
    return None


def _with_note(found: tuple[str, str], tox: object) -> tuple[str, str]:
    """A guess made although tox is configured says why tox's commands were not taken."""
    if not isinstance(tox, tox_ini.NotRead):
        return found
    return found[0], f"{found[1]} (tox's commands not used: {tox.why})"


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


def _declared(
    check: Callable[[Path], tuple[str, str] | None], repo_venv: bool
) -> Callable[[Path], tuple[str, str] | None]:
    """A declared command, its `python`/`pytest` taken from the repository's own venv when no
    virtualenv is active (as the pytest command found from files is)."""

    def found(root: Path) -> tuple[str, str] | None:
        got = check(root)
        if got is None:
            return None
        command, reason = got
        venv = _repo_venv(root) if repo_venv else None
        tokens = words(command)
        if venv is None or not tokens or tokens[0] not in _VENV_PROGRAMS:
            return command, reason
        if not (root / venv / "bin" / tokens[0]).exists():
            return command, reason
        tokens[0] = f"{venv}/bin/{tokens[0]}"
        prefix = tox_setenv.assignments(_assigned(command))  # tox's setenv stays with it
        joined = f"{prefix} {shlex.join(tokens)}" if prefix else shlex.join(tokens)
        return joined, f"{reason}; the repository's own {venv}/"

    return found


_VENV_PROGRAMS = ("python", "python3", "pytest")


def _assigned(command: str) -> dict[str, str]:
    """The `NAME=value` words before a simple command's program."""
    found = shell_tokens(command) or []
    names = found[: len(found) - len(words(command))]
    return dict(word.partition("=")[::2] for word in names)


def _python(
    check: Callable[[Path], str | None], repo_venv: bool
) -> Callable[[Path], tuple[str, str] | None]:
    """Python tests found by their files: pytest, unless they are unittest's and the
    environment they run in has no pytest (then `python -m unittest`, which needs nothing)."""
    as_pytest = _pytest(check, repo_venv)

    def found(root: Path) -> tuple[str, str] | None:
        chosen = as_pytest(root)
        if chosen is None or not repo_venv:  # a container's environment is not looked into
            return chosen
        venv = _repo_venv(root)
        python = f"{venv}/bin/python" if venv else "python"
        where = _environment(venv)
        if not _unittest_only(root) or _has_pytest(root, venv):
            return chosen
        command = f"{python} -m unittest{_discovery(root)}"
        return command, f"{check(root)}: unittest tests, no pytest in {where}"

    return found


def _environment(venv: str | None) -> str:
    if venv:
        return f"the repository's own {venv}/"
    active = os.environ.get("VIRTUAL_ENV")
    return f"the active virtualenv ({active})" if active else "the `python` on PATH"


def _has_pytest(root: Path, venv: str | None) -> bool:
    """Can the tests' python import pytest? Asked of that python (a fraction of a second); a
    python that cannot be asked counts as having it (pytest stays the default)."""
    active = os.environ.get("VIRTUAL_ENV")
    if venv:
        python = str(root / venv / "bin" / "python")
    elif active and (Path(active) / "bin" / "python").exists():
        python = str(Path(active) / "bin" / "python")
    else:
        python = shutil.which("python") or shutil.which("python3") or ""
    if not python:
        return True
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)"
    try:
        done = subprocess.run(
            [python, "-c", code], cwd=root, capture_output=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return True
    return done.returncode != 1


_UNITTEST = re.compile(r"^\s*(?:import unittest|from unittest\b)", re.M)
_PYTEST_USE = re.compile(r"^\s*(?:import pytest|from pytest\b|from _pytest\b)|@pytest\.", re.M)
_MAX_TEST_FILES = 50  # test files read to tell unittest's tests from pytest's
_MAX_READ = 64 * 1024


def _unittest_only(root: Path) -> bool:
    """Do the test files use unittest, and none of them pytest? Those in a tests/ folder are
    read first: the search from the root may spend its budget in a big package beside it."""
    files = next(
        (found for name in ("tests", "test") if (found := _test_files_in(root / name))), None
    )
    files = files or _find_all(root, _is_test_file, _MAX_TEST_FILES)
    uses_unittest = False
    for path in files:
        try:
            with path.open("rb") as handle:
                text = handle.read(_MAX_READ).decode("utf-8", errors="replace")
        except OSError:
            continue
        if _PYTEST_USE.search(text):
            return False
        uses_unittest = uses_unittest or bool(_UNITTEST.search(text))
    return uses_unittest


def _test_files_in(folder: Path) -> list[Path]:
    return _find_all(folder, _is_test_file, _MAX_TEST_FILES) if folder.is_dir() else []


def _discovery(root: Path) -> str:
    """unittest's discovery from the root enters packages only: a tests/ folder that is not
    one is searched from itself (`discover -s tests`)."""
    for name in ("tests", "test"):
        folder = root / name
        if folder.is_dir() and not (folder / "__init__.py").is_file():
            if _find(folder, _is_test_file) is not None:
                return f" discover -s {name}"
    return ""


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
    for name in declared.MAKEFILES:
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
    found = _find_all(top, wanted, 1)
    return found[0] if found else None


def _find_all(top: Path, wanted: Callable[[str], bool], limit: int) -> list[Path]:
    """Up to `limit` files, breadth first, bounded in depth and entries."""
    queue: deque[tuple[Path, int]] = deque([(top, 0)])
    budget = MAX_ENTRIES
    found: list[Path] = []
    while queue and budget > 0:
        folder, depth = queue.popleft()
        try:  # a folder of 40,000 files is not read whole (nor sorted) for a few of them
            with os.scandir(folder) as listing:
                entries = list(itertools.islice(listing, budget))
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            budget -= 1
            if entry.is_file(follow_symlinks=False) and wanted(entry.name):
                found.append(Path(entry.path))
                if len(found) >= limit:
                    return found
            if depth < MAX_DEPTH and _worth_entering(entry):
                queue.append((Path(entry.path), depth + 1))
    return found


def _worth_entering(entry: os.DirEntry[str]) -> bool:
    name = entry.name
    hidden = name.startswith(".")
    return not hidden and name not in SKIP_DIRS and entry.is_dir(follow_symlinks=False)
