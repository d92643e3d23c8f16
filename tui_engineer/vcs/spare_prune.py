"""Pruning the spare shadows (vcs/spare.py), at a session's start, in the background.

What no session would take goes: the spares of a repository that is no longer there (the
objects folder a spare reads through git's alternates is gone), spares not used for
`STALE_DAYS` days, spares in slots beyond the session's pool (`parallel_steps` lowered since),
what a kill left mid-deletion, and the older layout's one spare per repository
(`spare-worktrees`). Each is first renamed to a name no session takes, then deleted: a spare
being taken meanwhile is left to its taker, and a kill mid-deletion leaves only what the next
prune deletes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sys
import threading
import time
from pathlib import Path

import platformdirs

from tui_engineer.base.disk import remove_tree
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare import DEFAULT_POOL, SPARES, pool_for, slots
from tui_engineer.vcs.spare_clone import can_clone

STALE_DAYS = 14
OLD_LAYOUT = "spare-worktrees"  # one spare per repository, before the pools
_pruning = threading.Lock()  # one prune at a time in a process (`serve` starts many sessions)


def spares_root() -> Path:
    """Where every repository's pool of spares is (one folder each)."""
    return platformdirs.user_cache_path("tui-engineer") / SPARES


def prune(
    root: Path, size: int = DEFAULT_POOL, days: float = STALE_DAYS, own: Path | None = None
) -> list[Path]:
    """Delete the spares under `root` (spares_root) that no session would take (see the module
    docstring); the spares deleted. `size` is the pool of the session's own repository (`own`,
    every pool when None): another repository's sessions may keep more (its own settings)."""
    gone: list[Path] = []
    old = root.parent / OLD_LAYOUT
    if old.is_dir():
        _delete(old, root.parent / f"{OLD_LAYOUT}.deleting-{secrets.token_hex(4)}")
    pools = [entry for entry in _entries(root) if entry.is_dir()]
    for pool in pools:
        for entry in _entries(pool):
            if not entry.name.isdigit():  # being deleted: a kill stopped it, or another prune
                _remove(entry)
            elif _stale(entry, size if own in (None, pool) else None, days) and _delete(
                entry, _aside(entry)
            ):
                gone.append(entry)
        with contextlib.suppress(OSError):  # not empty: spares kept
            pool.rmdir()
    return gone


def prune_in_background(
    size: int = DEFAULT_POOL, days: float = STALE_DAYS, own: Path | None = None
) -> threading.Thread:
    """Prune in a thread of its own, at the lowest priority: the session goes on at once. The
    folder is read now (the user cache as this process sees it at the start). `own`: the
    session's repository's pool, the only one `size` bounds."""
    root = spares_root()

    def work() -> None:
        if not _pruning.acquire(blocking=False):
            return  # another session of this process is pruning
        try:
            if sys.platform == "linux":  # a nice value is a thread's own there
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            prune(root, size, days, own)
        except OSError:
            pass  # a spare it could not delete is there at the next start
        finally:
            _pruning.release()

    thread = threading.Thread(target=work, name="prune-spares", daemon=True)
    thread.start()
    return thread


def _stale(spare: Path, size: int | None, days: float) -> bool:
    if size is not None and int(spare.name) >= size:
        return True
    try:
        alternates = (spare / ".git" / "objects" / "info" / "alternates").read_text()
        used = spare.stat().st_mtime
    except OSError:
        return True  # not a whole shadow: no session could use it
    objects = Path(alternates.split("\n", 1)[0].strip())
    return not objects.is_dir() or used < time.time() - days * 86400


def _aside(spare: Path) -> Path:
    return spare.with_name(f"deleting-{spare.name}-{secrets.token_hex(4)}")


def _delete(folder: Path, aside: Path) -> bool:
    """Rename `folder` out of reach, then delete it; False when it was gone (taken) first."""
    try:
        os.rename(folder, aside)
    except OSError:
        return False
    _remove(aside)
    return True


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        remove_tree(entry)
    else:
        entry.unlink(missing_ok=True)


def _entries(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def summary(repo_root: Path) -> str:
    """How many spares there are and the disk they take, this repository's and every one's
    (tui-engineer doctor)."""
    with open_repo(repo_root) as repo:
        here = pool_for(shadow_home(repo))
    root = spares_root()
    mine = [here / name for name in slots(here)]
    every = [pool / name for pool in _entries(root) for name in slots(pool)]
    # Spares cloned from one another (vcs/spare_clone.py) share blocks the count cannot see.
    bound = "at most " if every and can_clone(every[0] / ".git" / "index", root) else ""
    return (
        f"{len(mine)} for this repository ({bound}{_mib(mine)}), {len(every)} in all "
        f"({bound}{_mib(every)}), in {root} (safe to delete when no session runs)"
    )


def _mib(folders: list[Path]) -> str:
    """The disk `folders` take, each file counted once."""
    seen: dict[tuple[int, int], int] = {}
    for folder in folders:
        for path, _, names in os.walk(folder):
            for name in names:
                with contextlib.suppress(OSError):
                    info = os.lstat(os.path.join(path, name))
                    seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return f"{sum(seen.values()) / (1024 * 1024):,.0f} MiB"
