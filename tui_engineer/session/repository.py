"""What a front end asks of the user's repository outside a running session, through the core:
its root, the last accepted step taken back when no session is open (a running session does
it itself, Session.undo_last), and which of some files hold uncommitted edits."""

from __future__ import annotations

from pathlib import Path

from tui_engineer.vcs import find_repo_root, undo_last
from tui_engineer.vcs.repo import uncommitted


def repo_root(path: Path) -> Path:
    """The repository `path` is in (NotARepo says how to make one)."""
    return find_repo_root(path)


def undo_last_step(path: Path) -> str:
    """Take back the last accepted step's commit in the repository at `path`; what was done."""
    return undo_last(find_repo_root(path))


def edited_by_user(root: Path, paths: list[str]) -> list[str]:
    """Those of `paths` that differ from HEAD in the user's working tree."""
    return uncommitted(root, paths)
