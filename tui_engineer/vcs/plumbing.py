"""Plain git subprocess calls for accept: plumbing commands with bytes in and out.

gitpython's `repo.git` wants text and has no clean way to feed NUL-separated input; accept's
plumbing (hash-object, update-index --index-info, commit-tree, update-ref, hook run) goes
through here instead. Every call is a real git process in the user's repository.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import git

EMPTY_OLD = ""  # update-ref's old value meaning "the ref must not exist yet"


def run_git(
    root: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    data: bytes | None = None,
    check: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run `git args` in `root`; raise git.GitCommandError (with git's output) on failure."""
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(
        ["git", *args],
        cwd=root,
        env=full_env,
        input=data if data is not None else b"",
        capture_output=True,
    )
    if check:
        raise_for(done)
    return done


def raise_for(done: subprocess.CompletedProcess[bytes]) -> None:
    """git.GitCommandError with the command's output when it failed (what callers catch)."""
    if done.returncode != 0:
        raise git.GitCommandError(
            [str(a) for a in done.args],
            done.returncode,
            done.stderr.decode(errors="replace"),
            done.stdout.decode(errors="replace"),
        )


def git_text(root: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    return run_git(root, *args, env=env).stdout.decode(errors="surrogateescape").strip()


def rev(root: Path, name: str) -> str | None:
    """The commit `name` points at, or None when it does not exist (an unborn branch)."""
    done = run_git(root, "rev-parse", "-q", "--verify", f"{name}^{{commit}}", check=False)
    return done.stdout.decode().strip() or None


def git_dir(root: Path) -> Path:
    """The repository's git folder (a linked worktree's own), found without a git process, as
    accept finds it when it writes its journal there."""
    repo = git.Repo(root)
    try:
        return Path(repo.git_dir).resolve()
    finally:
        repo.close()
