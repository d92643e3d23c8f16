"""The user's git pre-commit hook, run on a step's content as `git commit` would show it.

The hook is found in the user's repository as git finds it (`rev-parse --git-path`, so
core.hooksPath applies) and run in the shadow: GIT_INDEX_FILE points at a scratch index holding
the step's tree (a hook reading `git diff --cached` sees the step staged against the baseline)
and the working files are the step's (a hook running `ruff check calc` sees them too)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tui_engineer.base.safe_git import shadow_git_full_env

HOOK = "pre-commit"


def find_hook(root: Path) -> Path | None:
    """The user's pre-commit hook file, when there is one git would run."""
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--git-path", f"hooks/{HOOK}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return None
    path = Path(done.stdout.strip())
    path = path if path.is_absolute() else root / path
    return path if path.is_file() and os.access(path, os.X_OK) else None


def _git(workdir: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(
        ["git", "-C", str(workdir), *args],
        env={**shadow_git_full_env(), **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@contextmanager
def staged(workdir: Path, tree: str, hook: Path, scratch_in: Path | None = None) -> Iterator[str]:
    """The command running a copy of `hook` (the sandbox may not see the user's repository)
    with a scratch index holding `tree`, both where the run can read them (`scratch_in`, by
    default the shadow's .git)."""
    folder = scratch_in or workdir / ".git"
    with tempfile.TemporaryDirectory(dir=folder, prefix=".tui-engineer-hook-") as scratch:
        index, copy = Path(scratch) / "index", Path(scratch) / HOOK
        _git(workdir, "read-tree", tree, env={"GIT_INDEX_FILE": str(index)})
        shutil.copy2(hook, copy)
        yield f"GIT_INDEX_FILE={shlex.quote(str(index))} {shlex.quote(str(copy))}"


@contextmanager
def baseline_checkout(workdir: Path, commit: str) -> Iterator[Path]:
    """The starting commit checked out in the shadow's .git (a worktree of the shadow: a run
    in the shadow can read it and its objects), removed after."""
    folder = Path(tempfile.mkdtemp(prefix="hook-base-", dir=workdir / ".git"))
    folder.rmdir()
    _git(workdir, "worktree", "add", "--detach", "-q", str(folder), commit, env={})
    try:
        yield folder
    finally:
        subprocess.run(
            ["git", "-C", str(workdir), "worktree", "remove", "--force", str(folder)],
            env=shadow_git_full_env(),
            capture_output=True,
        )


def in_folder(folder: Path, command: str) -> str:
    return f"cd {shlex.quote(str(folder))} && {command}"
