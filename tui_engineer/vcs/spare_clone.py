"""A shadow whose files share their disk blocks with a sibling's, where the file system can
(issue 47: steps prepared side by side cost the disk of what they change).

With no spare in the pool (vcs/spare.py), a new shadow is a checkout of every file: a
repository's worth of disk for each step prepared beside the session's shadow, and kept as that
many spares after. On a file system with reflinks (btrfs, XFS made with reflink=1, bcachefs,
OCFS2) a file can instead be a clone of another: the two share their blocks until one is
written. Then the new shadow is a clone of a live sibling's folder (`cp -a --reflink=always`,
one clone per file, no data copied) and is made exact the way a spare is: fresh git metadata,
`git update-index --refresh` (the copied index's stat data is the source's; git reads each
file once to see it unchanged and records the copy's own, rewriting none), then the reset and
the clean of `Shadow._fill`, which rewrite only what differs from the baseline. Whatever the
sibling was doing meanwhile (a test run writing, a staging) is undone by those.

Elsewhere (ext4, tmpfs, macOS, no GNU cp) nothing here happens and the shadow is checked out:
one clone of a tiny file tells, once per file system.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import git

from tui_engineer.base.disk import remove_tree
from tui_engineer.vcs.shadow_place import owner_file
from tui_engineer.vcs.spare import fresh_metadata

_FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)
_CLONES: dict[int, bool] = {}  # st_dev -> whether a file there can be cloned


def clone_sibling(path: Path) -> bool:
    """Fill `path` (not there yet) with a clone of a live shadow beside it, with fresh git
    metadata as a taken spare has (vcs/spare.py); whether it was. It still holds the sibling's
    files as they were: the caller makes it exact (`refresh_copied_index`, then a reset and a
    clean)."""
    if sys.platform != "linux" or shutil.which("cp") is None:
        return False
    source = _sibling(path)
    if source is None or not can_clone(source / ".git" / "HEAD", path.parent):
        return False
    # A sibling mid-run may lose a file while it is copied: cp says so and goes on; what it
    # missed, the reset writes. Only a copy with no index is no use.
    subprocess.run(
        ["cp", "-a", "--reflink=always", "--", str(source), str(path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        check=False,
    )  # fmt: skip
    if (path / ".git" / "index").is_file():
        fresh_metadata(path)
        return True
    remove_tree(path)
    return False


def refresh_copied_index(runner: git.Git) -> None:
    """The copy's index told its files' own stat data (`runner`: git there). Files that differ
    stay marked so (the reset rewrites them): its exit status says nothing to act on."""
    runner.execute(
        ["git", "update-index", "-q", "--ignore-missing", "--refresh"], with_exceptions=False
    )


def can_clone(sample: Path, folder: Path) -> bool:
    """Whether a file like `sample` can be cloned into `folder` (same file system, reflinks)."""
    try:
        device = folder.stat().st_dev
        if sample.stat().st_dev != device:
            return False
    except OSError:
        return False
    if device not in _CLONES:
        _CLONES[device] = _try_clone(sample, folder)
    return _CLONES[device]


def _try_clone(sample: Path, folder: Path) -> bool:
    probe = folder / f".clone-probe-{os.getpid()}"
    try:
        with sample.open("rb") as src, probe.open("wb") as dst:
            fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
        return True
    except OSError:  # EOPNOTSUPP, EINVAL, EXDEV: not here
        return False
    finally:
        probe.unlink(missing_ok=True)


def _sibling(path: Path) -> Path | None:
    """The oldest live shadow of the same repository beside `path` (its owner lock the oldest):
    the session's own, complete, rather than another step's still being filled."""
    found: list[tuple[int, Path]] = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return None
    for name in names:
        candidate = path.parent / name
        if candidate == path or not (candidate / ".git" / "index").is_file():
            continue
        try:
            found.append((owner_file(candidate).stat().st_mtime_ns, candidate))
        except OSError:
            continue  # not owned: a shadow being removed, or a dead session's
    return min(found)[1] if found else None
