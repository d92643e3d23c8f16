"""Removing what crashed sessions left behind: their shadow repositories and folders.

Ours are recognised by the reason every shadow is created with ("tui-engineer session <id> pid
<pid> host <host> started <time>", in its `.git/tui-engineer-session`; older versions put it on a
linked worktree's lock) or by living under this repository's shadow folder. A shadow whose
session still runs (another process holds its `<id>.owner` lock: vcs/owner.py) is left alone;
any other is removed at once, even one a kill left half made or half removed. Only a shadow of
an older version, which held no lock, is told by the process id in its reason.
Sessions make no branches, so there are none to clean: baselines are kept alive only by the
worktree's detached HEAD and go with it. The one ref accept writes (refs/tui-engineer/undo/<sha>,
what undo restores) is not a leftover: accept keeps exactly one and undo deletes it.
"""

from __future__ import annotations

import os
import re
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import git

from tui_engineer.base.disk import remove_tree
from tui_engineer.base.processes import is_running
from tui_engineer.vcs.owner import alive
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import LOCK_PREFIX, owner_file, session_reason, shadow_home
from tui_engineer.vcs.spare_ahead import AHEAD

_REASON = re.compile(
    rf"^{LOCK_PREFIX} (?P<session>\S+) pid (?P<pid>\d+) host (?P<host>\S+) started (?P<started>\S+)"
)


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


def _live(folder: Path, match: re.Match[str] | None) -> bool:
    """Whether a live session owns the shadow `folder`: its owner lock is held; a shadow of an
    older version (no lock file) by the process id in its reason."""
    held = alive(owner_file(folder))
    if held is not None:
        return held
    return match is not None and _running_elsewhere(int(match["pid"]), match["host"])


def _running_elsewhere(pid: int, host: str) -> bool:
    """Whether another live process on this machine has the id an older version's shadow
    names (an older version held no owner lock)."""
    if host != socket.gethostname() or pid == os.getpid():
        return False  # our own process only reaches here for sessions it no longer runs
    return is_running(pid)


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
        return None  # linked worktrees are an older version's: it held no owner lock
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
            if folder.suffix == ".owner":
                _clean_owner_file(folder)
                continue
            if folder.suffix == REPORTS:
                _clean_reports(folder)
                continue
            sentence = _clean_shadow(folder)
            if sentence:
                done.append(sentence)
    return done


REPORTS = ".reports"  # a session's test report folders, beside its shadow


def session_reports(root: Path, session_id: str) -> Path:
    """Where session `session_id`'s test runs write their reports (JUnit files): beside its
    shadow, so that a kill mid-run leaves them where the next start cleans them."""
    with open_repo(root) as repo:
        return shadow_home(repo) / f"{session_id}{REPORTS}"


def _clean_owner_file(lock: Path) -> None:
    """An owner lock whose shadow is gone and whose process too (a kill during cleanup)."""
    if not lock.with_suffix("").exists() and alive(lock) is False:
        lock.unlink(missing_ok=True)


def _clean_reports(folder: Path) -> None:
    """A session's report folders, once the session is gone (its owner lock not held)."""
    if not alive(owner_file(folder.with_suffix(""))):
        remove_tree(folder)


def running_session(root: Path, session_id: str) -> int | None:
    """The process on this machine that runs session `session_id` now (its shadow says so and
    that process is alive), or None."""
    with open_repo(root) as repo:
        folder = shadow_home(repo) / session_id
    match = _REASON.match(session_reason(folder) or "")
    if match is None or not _live(folder, match):
        return None
    return int(match["pid"])


def _clean_shadow(folder: Path) -> str | None:
    """Remove a shadow repository whose session is gone; say so, or None if it was kept."""
    match = _REASON.match(session_reason(folder) or "")
    if _live(folder, match):
        return None
    remove_tree(folder)
    owner_file(folder).unlink(missing_ok=True)
    if folder.name.startswith(AHEAD):
        return None  # a spare a quit cut short (vcs/spare_ahead.py): no session to name
    if match is None:  # a kill while it was made, or while it was removed
        return f"removed leftover folder of session {folder.name} ({folder})"
    when = _when(match["started"])
    return (
        f"removed leftover worktree from session {match['session']} (crashed; it started on {when})"
    )


def remove_worktree(repo: git.Repo, path: Path) -> None:
    """Remove a shadow left by an older version (a linked worktree of the user's repository):
    `git worktree remove` even if locked or dirty (it is ours), then prune stale records."""
    # A locked worktree whose folder is gone is never pruned, so unlock it first.
    repo.git.worktree("unlock", str(path), with_exceptions=False)
    if path.exists():
        repo.git.worktree("remove", "--force", "--force", str(path), with_exceptions=False)
    repo.git.worktree("prune")
    remove_tree(path)
