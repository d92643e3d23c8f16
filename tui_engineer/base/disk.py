"""A disk that is full, over quota or read-only is the machine's state, not a bug and not the
model's fault: said as what it is, with the folder and how much room is missing."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from tui_engineer.base.errors import UserError

NO_ROOM = {
    errno.ENOSPC: "No space left on device",
    errno.EDQUOT: "Disk quota exceeded",
    errno.EROFS: "Read-only file system",
}


class DiskFull(UserError):
    """Writing failed because the file system holding a folder has no room or is read-only."""


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def no_room(folder: Path, needed: int, doing: str, then: str) -> DiskFull | None:
    """DiskFull when the file system holding `folder` is read-only or has less than `needed`
    bytes free (git says only 'unable to write file'), else None. `doing` says what failed,
    `then` what is so and what to do."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    if stats.f_flag & os.ST_RDONLY:
        return DiskFull(f"{doing}: {NO_ROOM[errno.EROFS]} ({folder}). {then}")
    free = stats.f_bavail * stats.f_frsize
    if free >= needed:
        return None
    return DiskFull(
        f"{doing}: {NO_ROOM[errno.ENOSPC]} in {folder} ({_size(free)} free, "
        f"{_size(needed)} needed). {then}"
    )


def from_os_error(err: OSError, doing: str, then: str) -> DiskFull | None:
    """DiskFull for an OSError that is ENOSPC, EDQUOT or EROFS (naming its file), else None."""
    if err.errno not in NO_ROOM:
        return None
    where = f" ({err.filename})" if err.filename else ""
    return DiskFull(f"{doing}: {NO_ROOM[err.errno]}{where}. {then}")


def disk_trouble(err: BaseException) -> DiskFull | None:
    """DiskFull when `err`, or an error it came from, is a full, over-quota or read-only disk:
    an OSError with that errno, or a command (git) whose words say so."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, DiskFull):
            return cause
        then = "Free some space (or make it writable), then start tui-engineer again."
        if isinstance(cause, OSError) and (full := from_os_error(cause, "Writing failed", then)):
            return full
        said = [words for words in NO_ROOM.values() if words in str(cause)]
        if said:
            line = next(ln for ln in str(cause).splitlines() if said[0] in ln).strip(" '")
            return DiskFull(f"Writing failed: {line[:300]}. {then}")
        cause = cause.__cause__ or cause.__context__
    return None
