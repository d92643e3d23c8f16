"""Where a repository's shadows live, and how a folder there is known to be one of ours: its
session's reason file inside its .git and the owner lock beside it (vcs/shadow.py holds the
shadow itself; vcs/cleanup.py removes what dead sessions left)."""

from __future__ import annotations

import os
import socket
from datetime import datetime
from hashlib import sha1
from pathlib import Path

import git
import platformdirs

from tui_engineer.base.safe_git import SESSION_FILE

LOCK_PREFIX = "tui-engineer session"


def shadow_home(repo: git.Repo) -> Path:
    """The folder holding this repository's shadow worktrees (one per session)."""
    common = Path(repo.common_dir).resolve()
    name = Path(repo.working_tree_dir or common.parent).name or "repo"
    key = sha1(str(common).encode()).hexdigest()[:10]
    return platformdirs.user_cache_path("tui-engineer") / "worktrees" / f"{name}-{key}"


def lock_reason(session_id: str) -> str:
    started = datetime.now().astimezone().isoformat(timespec="seconds")
    host = socket.gethostname()
    return f"{LOCK_PREFIX} {session_id} pid {os.getpid()} host {host} started {started}"


def owner_file(path: Path) -> Path:
    """The lock a shadow's session holds while it lives (beside the shadow's folder)."""
    return path.with_name(path.name + ".owner")


def init_shadow_repo(path: Path, objects: Path, reason: str) -> None:
    """An empty repository of its own at `path` that reads the user's objects (alternates). No
    template (so no hooks), its own refs, config and index: nothing a test does to it can reach
    the user's repository. New objects (proposals, snapshots) are written here only."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git.Git().execute(
        ["git", "-c", "init.defaultBranch=shadow", "init", "-q", "--template=", str(path)]
    )
    # Its index is written many times a step and read by no one but git here: no checksum
    # over it (git 2.40+; 0.01 s a write at 40,000 files). Never the user's index.
    git.Git(path).execute(["git", "config", "index.skipHash", "true"])
    info = path / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{objects}\n")
    (path / ".git" / SESSION_FILE).write_text(reason + "\n")


def session_reason(path: Path) -> str | None:
    """The lock reason a shadow repository was made with, or None if it is not one of ours."""
    try:
        return (path / ".git" / SESSION_FILE).read_text().strip()
    except OSError:
        return None
