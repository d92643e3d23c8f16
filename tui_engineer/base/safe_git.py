"""Git in a shadow never runs a program a test planted there.

A shadow's own `.git/config` is written by tests only when they run uncontained (`--sandbox
none`; bubblewrap keeps it read-only), but where they can, `core.fsmonitor` is a command git runs
on nearly every call (status, add, diff, reset, ls-files) and `core.hooksPath` picks the hooks
(post-index-change after every index write, reference-transaction on every ref update). Every
git process the tool starts in a shadow gets these settings on top, as git's environment config
(`GIT_CONFIG_COUNT`, same rank as `git -c`), which wins over the repository's config files.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

# Inside a shadow's own .git: the lock reason, which is how cleanup recognises ours (vcs/shadow.py)
# and how what lists a folder's files knows it may stage them (the index is the session's own).
SESSION_FILE = "tui-engineer-session"
# Settings that would make git run a program of the shadow's choosing, and what they become.
OVERRIDES = {"core.fsmonitor": "false", "core.hooksPath": "/dev/null"}


def shadow_git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables to add to git's environment (`base`, default os.environ) for a shadow:
    OVERRIDES appended to any GIT_CONFIG_COUNT settings already there."""
    source = os.environ if base is None else base
    try:
        first = int(source.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        first = 0
    env = {"GIT_CONFIG_COUNT": str(first + len(OVERRIDES))}
    for i, (key, value) in enumerate(OVERRIDES.items(), start=first):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def shadow_git_full_env() -> dict[str, str]:
    """os.environ plus shadow_git_env(): for `subprocess.run(["git", ...], env=...)`."""
    return {**os.environ, **shadow_git_env()}


_index_locks: dict[Path, threading.RLock] = {}
_index_locks_guard = threading.Lock()


def index_lock(workdir: Path) -> threading.RLock:
    """The lock to hold while staging a shadow's files (`git add -A` then reading the index).
    The baseline and the test selection stage the same shadow from threads side by side, and
    git fails a second writer of an index at once (`index.lock: File exists`) instead of
    waiting."""
    key = Path(workdir).resolve()
    with _index_locks_guard:
        # Reentrant: a holder may list the shadow's changes, which stage it too.
        return _index_locks.setdefault(key, threading.RLock())


def is_shadow(root: Path) -> bool:
    """Whether `root` is the top of one of our shadows (vcs/shadow.py), not a user's repository."""
    return (root / ".git" / SESSION_FILE).is_file()
