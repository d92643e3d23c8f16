"""A check as it runs (`Check`), what a search found (`Found`), and where a tool of the user's
environment is: the repository's own venv, the active virtualenv, or PATH without this program's
own environment (a dev checkout's venv has ruff too; the user's project may not)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

PY = (".py", ".pyi")
REPO_VENVS = (".venv", "venv")


@dataclass(frozen=True)
class Check:
    """One check as it runs: `command` in the project's folder, the step's files appended when
    `files` (those ending in `suffixes`, when given); a `formatter` rewrites them."""

    id: str  # what the user names it by in `project_checks` ("ruff", "mypy", a local hook's id)
    name: str  # what is shown ("ruff check", "ruff format", "npm run lint")
    command: str
    reason: str  # where the project declares it, and where the tool was found
    files: bool = True
    suffixes: tuple[str, ...] = ()
    formatter: bool = False
    pattern: str = ""  # a regular expression the file's path must match (pre-commit's `files`)
    # Writes nothing in the project's folder (no cache there): it may run beside the tests.
    quiet: bool = False

    exclude: str = ""  # a regular expression of paths left out (pre-commit's `exclude`)

    def applies_to(self, path: str) -> bool:
        if self.pattern and re.search(self.pattern, path) is None:
            return False
        if self.exclude and re.search(self.exclude, path) is not None:
            return False
        return not self.suffixes or path.endswith(self.suffixes)


@dataclass
class Found:
    checks: list[Check] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # declared, tool not installed: said once

    def add(self, check: Check | None, missing: str = "") -> None:
        if check is not None and all(c.id != check.id for c in self.checks):
            self.checks.append(check)
        elif check is None and missing and missing not in self.missing:
            self.missing.append(missing)

    def merge(self, more: Found) -> None:
        for check in more.checks:
            self.add(check)
        for sentence in more.missing:
            self.add(None, sentence)


def tool(root: Path, program: str) -> tuple[str, str] | None:
    """(path to run, where it is) for a program of the user's environment, else None."""
    for venv in REPO_VENVS:
        if (root / venv / "pyvenv.cfg").is_file() and (root / venv / "bin" / program).exists():
            return str(root / venv / "bin" / program), f"the repository's own {venv}/"
    active = os.environ.get("VIRTUAL_ENV")
    if active and not _ours(Path(active)) and (Path(active) / "bin" / program).exists():
        return str(Path(active) / "bin" / program), f"the active virtualenv {active}"
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and not _ours(Path(p))
    )
    found = shutil.which(program, path=path)
    if found is None or _ours(Path(found).resolve().parent):
        return None
    return found, "PATH"


def _ours(path: Path) -> bool:
    """Inside the environment this program runs in (a dev checkout's venv has ruff too), or
    pyenv's shims when this program's Python is pyenv's (they run that Python's tools)."""
    mine = Path(sys.prefix).resolve()
    try:
        resolved = path.resolve()
    except OSError:
        return False
    if resolved.name == "shims" and mine.parent.name == "versions":
        return resolved.parent == mine.parent.parent
    return resolved.is_relative_to(mine)


# id → (program, arguments, what it is, formatter?); the arguments make its output one finding
# a line (path:line:col: message) and keep its cache out of the step's files.
_RUFF = "--no-cache --force-exclude "  # and files its config excludes stay unchecked
_MYPY = "--no-error-summary --no-pretty --cache-dir=/dev/null"  # mypy's own way to keep none
PYTHON_TOOLS = {
    "ruff": ("ruff", f"check {_RUFF}--output-format=concise", "ruff check", False),
    "ruff-format": ("ruff", f"format {_RUFF.strip()}", "ruff format", True),
    "black": ("black", "-q", "black", True),
    "mypy": ("mypy", f"{_MYPY} --show-column-numbers", "mypy", False),
    "flake8": ("flake8", "", "flake8", False),
    "isort": ("isort", "-q", "isort", True),
}


def python_check(root: Path, check_id: str, declared: str, extra: str = "") -> Found:
    program, args, name, formatter = PYTHON_TOOLS[check_id]
    found = Found()
    where = tool(root, program)
    if where is None:
        found.missing.append(
            f"{name} is declared ({declared}) but {program} is not installed in the "
            "repository's environment (its .venv, the active virtualenv or PATH): not run"
        )
        return found
    command = " ".join(p for p in (shlex.quote(where[0]), args, extra) if p)
    reason = f"{declared}; {program} from {where[1]}"
    quiet = not formatter  # their arguments keep caches out of the project's folder
    found.add(Check(check_id, name, command, reason, suffixes=PY, formatter=formatter, quiet=quiet))
    return found
