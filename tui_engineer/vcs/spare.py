"""The spare shadow: the last removed shadow's checkout, kept to make the next one (issue 47).

A fresh shadow writes every file of the repository (seconds and hundreds of MB at 40,000
files); removing it deletes them all again. Instead, removing a shadow moves its folder aside
(one rename) as its repository's spare, and the next shadow (the next session, a step prepared
ahead) takes it (one rename) and lets git rewrite only what differs from its new baseline: the
spare's index still knows every unchanged file, so `reset --hard` stats them and leaves them.

Exactness: the taken spare gets fresh git metadata (everything in its .git but the objects and
the index is deleted, then `git init` again), so nothing a test wrote there (config, hooks,
excludes) survives; `reset --hard` and `clean -ffdx` then leave the files exactly the baseline's,
with no file a test run wrote, ignored ones included. A spare git cannot use is deleted and the
shadow made fresh. One spare per repository, beside the shadows' folder (not in it: that folder
goes with its last shadow); deleting it is always safe. Not kept for repositories with
submodules (their checkouts are nested repositories of their own).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SPARES = "spare-worktrees"
_KEPT = {"objects", "index"}  # the only parts of a spare's .git that are reused


def spare_for(home: Path) -> Path:
    """The spare of the repository whose shadows live in `home` (vcs/shadow.shadow_home)."""
    return home.parent.parent / SPARES / home.name


def park(path: Path) -> bool:
    """Keep the shadow at `path` as its repository's spare; False when it is not kept (a spare
    is there already, it has submodules, or it is not a whole shadow): delete it then."""
    if not (path / ".git" / "index").is_file() or (path / ".gitmodules").exists():
        return False
    spare = spare_for(path.parent)
    if spare.exists():
        return False
    try:
        spare.parent.mkdir(parents=True, exist_ok=True)
        os.rename(path, spare)  # not onto an existing folder: a spare taken meanwhile
    except OSError:
        return False
    return True


def take(path: Path) -> bool:
    """Move the spare (if any) to `path`, with fresh git metadata to come: whether there was
    one. Only one taker gets it (a rename)."""
    spare = spare_for(path.parent)
    try:
        os.rename(spare, path)
    except OSError:
        return False
    dot = path / ".git"
    _empty(dot, keep=_KEPT)
    # Its own objects (the last session's proposals, what its runs staged) are needed no more:
    # its refs are gone, and the index's entries are rewritten from the user's objects.
    _empty(dot / "objects", keep={"info"})
    return True


def _empty(folder: Path, keep: set[str]) -> None:
    """Delete what `folder` holds but the entries named in `keep`."""
    for entry in list(folder.iterdir()) if folder.is_dir() else []:
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def clear(path: Path) -> None:
    """No folder at `path`: a spare git could not use is deleted, or, where a test left what
    cannot be deleted (a folder without permissions), moved aside for the next start's cleanup
    (vcs/cleanup.py removes any folder there no live session owns), never built on."""
    shutil.rmtree(path, ignore_errors=True)
    if path.exists():
        os.rename(path, path.with_name(f"{path.name}.broken-{os.getpid()}"))
