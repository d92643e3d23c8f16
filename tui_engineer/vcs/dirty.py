"""Uncommitted changes at a session's start: refused (headless), saved as a WIP commit or a
stash, or included in the commit the shadow worktree starts from. Nothing is ever discarded."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Literal

import git

from tui_engineer.base.errors import UserError
from tui_engineer.vcs.identity import INTERNAL_IDENTITY, require_identity
from tui_engineer.vcs.repo import (
    GitRefused,
    RepoState,
    git_output,
    head_sha,
    open_repo,
    read_state,
    refuse_in_progress,
)

WIP_MESSAGE = "WIP: saved by tui-engineer before session"
DirtyChoice = Literal["wip", "stash", "include"]


class DirtyTree(UserError):
    """Uncommitted changes where the caller (headless) may not build on them."""

    @classmethod
    def for_files(cls, root: Path, files: Sequence[str]) -> DirtyTree:
        shown = "\n  ".join(files[:10])
        more = f"\n  … and {len(files) - 10} more" if len(files) > 10 else ""
        return cls(
            f"{root} has uncommitted changes:\n  {shown}{more}\n"
            "Commit or stash them yourself, or pass --allow-dirty to build on top of them "
            "(they stay uncommitted; only each accepted step is committed).",
            exit_code=2,
        )


def snapshot_commit(repo: git.Repo, *, include_dirty: bool, state: RepoState | None = None) -> str:
    """A commit to start a shadow worktree from: HEAD, plus the user's uncommitted changes
    (untracked non-ignored files too) when `include_dirty`.

    The snapshot is built in a temporary index, so the user's index and files are untouched; the
    commit is on no branch (the shadow worktree's detached HEAD is what keeps it alive).
    With no commits yet, the base is a parentless commit (empty, or holding the user's files).
    `state`: the repository's state if the caller just read it (its HEAD is used).
    """
    head = state.head if state is not None else head_sha(repo)
    if head and not include_dirty:
        return head
    with tempfile.TemporaryDirectory(prefix="tui-engineer-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        real_index = Path(repo.git_dir) / "index"
        if include_dirty and real_index.exists():
            shutil.copyfile(real_index, env["GIT_INDEX_FILE"])  # its stat cache makes add fast
        elif head:
            repo.git.read_tree(head, env=env)
        if include_dirty:
            repo.git.add("-A", env=env)
        tree = repo.git.write_tree(env=env)
    if head and tree == repo.git.rev_parse(f"{head}^{{tree}}"):
        return head  # nothing uncommitted after all
    parents = ["-p", head] if head else []
    message = "tui-engineer baseline: HEAD plus uncommitted changes"
    if not head:
        message = "tui-engineer baseline: no commits yet"
    return repo.git.commit_tree(
        tree, *parents, "--no-gpg-sign", "-m", message, env=INTERNAL_IDENTITY
    ).strip()


@contextmanager
def index_guard(repo: git.Repo) -> Iterator[None]:
    """Put the user's index back exactly as it was if the body fails (e.g. a hook refused)."""
    index = Path(repo.git_dir) / "index"
    saved = index.read_bytes() if index.exists() else None
    try:
        yield
    except BaseException:
        if saved is None:
            index.unlink(missing_ok=True)
        else:
            index.write_bytes(saved)
        raise


def _save_as_wip(repo: git.Repo) -> str:
    require_identity(repo)
    first = head_sha(repo) is None
    try:
        with index_guard(repo):
            repo.git.add("-A")
            repo.git.commit("-q", "-m", WIP_MESSAGE)
    except git.GitCommandError as err:
        raise GitRefused(
            f"Could not commit your changes as WIP; nothing was changed.\n{git_output(err)}"
        ) from None
    sha = head_sha(repo) or ""
    undo = (
        "git update-ref -d HEAD" if first else "git reset --soft HEAD~1"
    )  # keeps the files, drops the commit
    return (
        f"Committed your uncommitted changes as '{WIP_MESSAGE}' ({sha[:8]}). "
        f"To turn it back into uncommitted changes later: {undo}"
    )


def _stash(repo: git.Repo) -> str:
    if head_sha(repo) is None:
        raise GitRefused(
            "git cannot stash in a repository with no commits yet. "
            "Choose 'commit as WIP' or 'include' instead."
        )
    label = f"tui-engineer: saved before session {datetime.now():%Y-%m-%d %H:%M:%S}"
    try:
        repo.git.stash("push", "--include-untracked", "-m", label)
    except git.GitCommandError as err:
        raise GitRefused(
            f"Could not stash your changes; nothing was changed.\n{git_output(err)}"
        ) from None
    return (
        f"Stashed your uncommitted changes as '{label}'. Get them back with: git stash pop "
        "(if you stash more in between, find it with git stash list)."
    )


def handle_dirty(root: Path, choice: DirtyChoice) -> str:
    """Deal with uncommitted changes before a session, as the user chose; returns what was done.

    Nothing is ever discarded: "wip" commits everything on the current branch, "stash" stashes it
    (untracked files included), "include" leaves the tree alone (the shadow starts from it).
    """
    with open_repo(root) as repo:
        state = read_state(repo)
        if not state.dirty:
            return "Nothing to save: the working tree has no uncommitted changes."
        refuse_in_progress(state, "save your changes")
        if choice == "wip":
            return _save_as_wip(repo)
        if choice == "stash":
            return _stash(repo)
        if choice == "include":
            return (
                "Your uncommitted changes stay as they are, uncommitted; each step builds on "
                "them. A step that edits one of those files commits that whole file."
            )
    raise ValueError(f"unknown choice {choice!r}: expected 'wip', 'stash' or 'include'")
