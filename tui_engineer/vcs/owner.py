"""Who owns an accept journal or a shadow: a lock its process holds for as long as it works.

A process id alone cannot say it: ids are reused (they wrap within minutes on a busy machine),
so an unrelated live process could pass for the owner and keep a dead session's journal or
shadow from being finished or cleaned. An flock taken through a descriptor the owner keeps open
is released by the kernel however that process ends (kill -9 too), and only then: "can it be
taken?" tells a live owner from a dead one, whatever ids are in use.

The descriptor is a raw one (os.open, not inherited by child processes): it is never closed by
garbage collection while the owner still works, only by `release` or the process's end.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path

_POLL = 0.05  # seconds between tries while waiting for a lock


def hold(path: Path, wait: float = 0.0) -> int | None:
    """Take the lock `path` (made if missing) and return its descriptor; None when another
    process (or another holder in this one) keeps it for longer than `wait` seconds."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(_POLL)


def release(fd: int | None, path: Path | None = None) -> None:
    """Let the lock go; with `path`, remove its file first (its owner's work is over)."""
    if fd is None:
        return
    if path is not None:
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        os.close(fd)


def alive(path: Path) -> bool | None:
    """Whether a live process holds the lock `path`: True, False, or None when there is no
    such file (an owner of an older version, which held none)."""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing lets a lock taken here go again
    return False
