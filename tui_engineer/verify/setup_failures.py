"""Failures of the test environment, not of the code: a program that is not there, a module that
is not the repository's and not installed, a file the repository ignores (so the shadow lacks it).
No edit fixes these, so a step that meets one stops and says what is missing instead of asking
the model for fixes. Read from any runner's output (runner-agnostic: plain text)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.disk import MIN_GUESS, NO_ROOM, no_room
from tui_engineer.base.names import EXACT
from tui_engineer.verify.report import TestReport
from tui_engineer.verify.toolchain_failures import toolchain_problem

_NOT_FOUND = re.compile(
    r"(?P<program>[\w./+-]+): (?:\d+: )?(?:command )?not found\s*$"  # sh, bash
    r"|(?:^|\s)(?P<exec>[\w./+-]+): No such file or directory\s*$"  # exec of a missing file
)
_NO_MODULE = re.compile(r"No module named '(?P<module>[\w.]+)'")
_NO_FILE = re.compile(r"No such file or directory: '(?P<path>[^']+)'")


def _texts(report: TestReport) -> list[str]:
    return [report.output_tail, *(f.message + "\n" + f.traceback for f in report.failures)]


def repo_modules(files: Iterable[str]) -> set[str]:
    """Top-level names importable from the repository: its packages and modules, at the root
    or under src/ (and every folder, since the import root is not known)."""
    names: set[str] = set()
    for path in files:
        for part in PurePosixPath(path).parts:
            names.add(part.removesuffix(".py"))
    return names


def environment_problem(
    report: TestReport,
    files: Iterable[str],
    ignored: Iterable[str] = (),
    workdir: Path | None = None,
) -> str | None:
    """What is missing from the environment, if that is why `report` failed (None: it is not).
    `files`: the paths the repository (the shadow) holds; `ignored`: paths the user's
    repository has but git ignores."""
    if report.ok:
        return None
    texts = _texts(report)
    if (full := disk_full(texts, workdir)) is not None:
        return full
    toolchain = toolchain_problem(report.output_tail) if not report.structured else None
    if toolchain is not None:
        return f"{toolchain.what}: {toolchain.fix} ({toolchain.line})"
    for text in texts:
        for line in text.splitlines():
            found = _NOT_FOUND.search(line)
            if found and (report.exit_code in (126, 127) or "not found" in line):
                program = found.group("program") or found.group("exec")
                return f"the program `{program}` was not found where the tests run ({line.strip()})"
    ours = repo_modules(files)
    for text in texts:
        for found in _NO_MODULE.finditer(text):
            module = found.group("module")
            if module.split(".")[0] not in ours:
                return (
                    f"the module `{module}` is not installed where the tests run and is not "
                    "part of this repository (install it in the project's environment)"
                )
    ignored_set = set(ignored)
    for text in texts:
        for found in _NO_FILE.finditer(text):
            path = _relative(found.group("path"), workdir)
            if path in ignored_set:
                return (
                    f"the file `{path}` is ignored by git, so the shadow worktree the tests run "
                    "in does not have it"
                )
    return None


DISK_FULL = "the disk where the tests run is full"


def disk_full(texts: Iterable[str], workdir: Path | None) -> str | None:
    """A run that failed writing to a full, over-quota or read-only disk: said with the folder
    and the room needed, never the model's to fix. Only when the shadow's own file system is
    that low (or read-only): a project's test of its own ENOSPC handling that fails is code."""
    lines = (line.strip() for text in texts for line in text.splitlines())
    said = next((ln for ln in lines if any(w in ln for w in NO_ROOM.values())), None)
    if said is None or workdir is None:
        return None
    full = no_room(workdir, MIN_GUESS, DISK_FULL, "")
    return None if full is None else f"{str(full).rstrip('. ')} ({said[:300]})"


def ignored_paths(root: Path, candidates: Iterable[str]) -> list[str]:
    """Which of `candidates` (paths relative to the user's repository) git ignores there."""
    wanted = [c.lstrip("./") for c in candidates if c and not c.startswith("/")]
    if not wanted:
        return []
    done = subprocess.run(
        ["git", "check-ignore", "-z", "--stdin", "--no-index"],
        input="".join(f"{name}\0" for name in wanted),
        cwd=root, capture_output=True, check=False, **EXACT,  # names exact, never quoted
    )  # fmt: skip
    return [name for name in done.stdout.split("\0") if name]


def missing_files(report: TestReport, workdir: Path | None = None) -> list[str]:
    """Paths in the worktree a failing run could not open (candidates for `ignored_paths`)."""
    found = (m.group("path") for text in _texts(report) for m in _NO_FILE.finditer(text))
    paths = {_relative(p, workdir) for p in found}
    return sorted(p for p in paths if not p.startswith("/"))


def _relative(path: str, workdir: Path | None) -> str:
    """A path the tests printed, relative to the worktree when it is inside it."""
    if workdir is not None and path.startswith(str(workdir) + "/"):
        return path[len(str(workdir)) + 1 :]
    return path.removeprefix("./")
