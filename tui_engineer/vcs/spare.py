"""Spare shadows: removed shadows' checkouts, kept to make the next ones (issue 47).

A fresh shadow writes every file of the repository (seconds and hundreds of MB at 40,000
files); removing it deletes them all again. Instead, removing a shadow moves its folder (one
rename) into its repository's pool of spares, and the next shadow (the next session, a step
prepared side by side) takes one (one rename) and lets git rewrite only what differs from its
new baseline: the spare's index still knows every unchanged file, so `reset --hard` stats them
and leaves them.

The pool: `<user cache>/tui-engineer/spares/<repo>-<hash>/<slot>`, slots 0 to n-1, n the
session's shadow plus the steps it prepares side by side (1 + `parallel_steps`: 4 by default).
A rename onto a slot that holds a spare fails, so the bound holds with no lock, and a spare is
taken by renaming it away: of two takers (two threads, two sessions) only one's rename
succeeds. What is deleted there is first renamed to a name that is not a slot, so a kill
mid-deletion leaves nothing a session would take (the next prune deletes it). Deleting the
pool by hand is safe while no session runs (a `rm -rf` racing a take would go on deleting
inside the shadow that took it).

Exactness: the taken spare gets fresh git metadata (everything in its .git but the objects and
the index is deleted, then `git init` again), so nothing a test wrote there (config, hooks,
excludes) survives; `reset --hard` and `clean -ffdx` then leave the files exactly the baseline's,
with no file a test run wrote, ignored ones included. A spare git cannot use is deleted and the
shadow made fresh. Not kept for repositories with submodules (their checkouts are nested
repositories of their own). Pruning (which spares go, and when): vcs/spare_prune.py. With no
spare left, a shadow beside a live one may be a clone of its files (vcs/spare_clone.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from tui_engineer.base.disk import remove_tree

SPARES = "spares"
DEFAULT_POOL = 4  # the session's shadow and `parallel_steps` (3 by default) prepared beside it
_KEPT = {"objects", "index"}  # the only parts of a spare's .git that are reused


def pool_for(home: Path) -> Path:
    """The spares of the repository whose shadows live in `home` (vcs/shadow_place.shadow_home)."""
    return home.parent.parent / SPARES / home.name


def slots(pool: Path) -> list[str]:
    """The spares in `pool` now, lowest slot first (any other name there is being deleted)."""
    try:
        names = os.listdir(pool)
    except OSError:
        return []
    return sorted((name for name in names if name.isdigit()), key=int)


def park(path: Path, size: int = DEFAULT_POOL) -> bool:
    """Keep the shadow at `path` as a spare of its repository; False when it is not kept (the
    pool's `size` slots are full, it has submodules, or it is not a whole shadow): delete it."""
    if not (path / ".git" / "index").is_file() or (path / ".gitmodules").exists():
        return False
    pool = pool_for(path.parent)
    try:
        pool.mkdir(parents=True, exist_ok=True)
        os.utime(path)  # when it was last used: a spare unused for long is pruned
    except OSError:
        return False
    for slot in range(size):
        try:
            os.rename(path, pool / str(slot))  # fails onto a slot that holds a spare
        except OSError:
            continue
        return True
    return False


def take(path: Path) -> bool:
    """Move a spare (if any) to `path`, with fresh git metadata to come: whether there was
    one. Only one taker gets each (a rename)."""
    pool = pool_for(path.parent)
    for slot in slots(pool):
        try:
            os.rename(pool / slot, path)
        except OSError:
            continue  # taken meanwhile, or pruned
        fresh_metadata(path)
        return True
    return False


def fresh_metadata(path: Path) -> None:
    """Of the shadow files at `path`, only its index and its objects' folder kept in its .git."""
    dot = path / ".git"
    _empty(dot, keep=_KEPT)
    # Its own objects (the last session's proposals, what its runs staged) are needed no more:
    # its refs are gone, and the index's entries are rewritten from the user's objects.
    _empty(dot / "objects", keep={"info"})


def _empty(folder: Path, keep: set[str]) -> None:
    """Delete what `folder` holds but the entries named in `keep`."""
    for entry in list(folder.iterdir()) if folder.is_dir() else []:
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            remove_tree(entry)
        else:
            entry.unlink(missing_ok=True)


def clear(path: Path) -> None:
    """No folder at `path`: a spare git could not use is deleted, or, where a test left what
    cannot be deleted (a folder without permissions), moved aside for the next start's cleanup
    (vcs/cleanup.py removes any folder there no live session owns), never built on."""
    remove_tree(path)
    if path.exists():
        os.rename(path, path.with_name(f"{path.name}.broken-{os.getpid()}"))
