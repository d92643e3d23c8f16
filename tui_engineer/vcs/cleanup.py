"""Removing what crashed sessions left behind: their shadow repositories and folders.

Ours are recognised by the reason every shadow is created with ("tui-engineer session <id> pid
<pid> host <host> started <time>", in its `.git/tui-engineer-session`; older versions put it on a
linked worktree's lock) or by living under this repository's shadow folder. A shadow whose
process still runs on this machine (another session) is left alone.
Sessions make no branches, so there are none to clean: baselines are kept alive only by the
worktree's detached HEAD and go with it. The one ref accept writes (refs/tui-engineer/undo/<sha>,
what undo restores) is not a leftover: accept keeps exactly one and undo deletes it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import git

from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import LOCK_PREFIX, remove_worktree, session_reason, shadow_home

_REASON = re.compile(
    rf"^{LOCK_PREFIX} (?P<session>\S+) pid (?P<pid>\d+) host (?P<host>\S+) started (?P<started>\S+)"
)
# A folder this young may belong to a session being created right now in another process.
_GRACE_SECONDS = 60


@dataclass
class _Worktree:
    path: Path
    locked: str | None = None
    prunable: bool = False


def _worktrees(repo: git.Repo) -> list[_Worktree]:
    out = repo.git.worktree("list", "--porcelain", "-z", strip_newline_in_stdout=False)
    found: list[_Worktree] = []
    for item in out.split("\0"):
        key, _, value = item.partition(" ")
        if key == "worktree":
            found.append(_Worktree(Path(value)))
        elif key == "locked" and found:
            found[-1].locked = value
        elif key == "prunable" and found:
            found[-1].prunable = True
    return found


def _running_elsewhere(pid: int, host: str) -> bool:
    """Whether another live process on this machine owns the worktree."""
    if host != socket.gethostname() or pid == os.getpid():
        return False  # our own process only reaches here for sessions it no longer runs
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _when(started: str) -> str:
    try:
        return datetime.fromisoformat(started).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return started


def _clean_worktree(repo: git.Repo, tree: _Worktree, home: Path, active: str | None) -> str | None:
    match = _REASON.match(tree.locked or "")
    if match is None and not tree.path.is_relative_to(home):
        return None  # not ours
    session = match["session"] if match else tree.path.name
    if session == active:
        return None
    if match and _running_elsewhere(int(match["pid"]), match["host"]):
        return None
    remove_worktree(repo, tree.path)
    when = f" (crashed; it started on {_when(match['started'])})" if match else ""
    if tree.prunable:
        return f"removed git's record of the worktree of session {session}{when}"
    return f"removed leftover worktree from session {session}{when}"


def cleanup_leftovers(root: Path, *, active_session: str | None = None) -> list[str]:
    """Remove leftovers of crashed sessions in this repository; say what was removed."""
    done: list[str] = []
    with open_repo(root) as repo:
        home = shadow_home(repo).resolve()
        trees = _worktrees(repo)
        for tree in trees:
            sentence = _clean_worktree(repo, tree, home, active_session)
            if sentence:
                done.append(sentence)
        if len(trees) > 1:  # the main worktree alone: git keeps no worktree records to prune
            repo.git.worktree("prune")
        known = {t.path.resolve() for t in trees}
        for folder in sorted(home.iterdir()) if home.is_dir() else []:
            if folder.resolve() in known or folder.name == active_session:
                continue
            sentence = _clean_shadow(folder)
            if sentence:
                done.append(sentence)
    return done


def running_session(root: Path, session_id: str) -> int | None:
    """The process on this machine that runs session `session_id` now (its shadow says so and
    that process is alive), or None."""
    with open_repo(root) as repo:
        folder = shadow_home(repo) / session_id
    match = _REASON.match(session_reason(folder) or "")
    if match is None or not _running_elsewhere(int(match["pid"]), match["host"]):
        return None
    return int(match["pid"])


def _clean_shadow(folder: Path) -> str | None:
    """Remove a shadow repository whose session is gone; say so, or None if it was kept."""
    match = _REASON.match(session_reason(folder) or "")
    if match is None:
        # A crash between making the folder and writing its reason leaves a bare folder.
        if time.time() - folder.stat().st_mtime <= _GRACE_SECONDS:
            return None
        shutil.rmtree(folder, ignore_errors=True)
        return f"removed leftover folder of session {folder.name} ({folder})"
    if _running_elsewhere(int(match["pid"]), match["host"]):
        return None
    shutil.rmtree(folder, ignore_errors=True)
    when = _when(match["started"])
    return (
        f"removed leftover worktree from session {match['session']} (crashed; it started on {when})"
    )
