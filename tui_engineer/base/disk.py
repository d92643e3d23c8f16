"""A disk that is full, over quota or read-only is the machine's state, not a bug and not the
model's fault: said as what it is, with the folder and how much room is missing."""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import tempfile
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


_FOLDERS: list[Path] = []  # where a session writes (its repository): asked when none is named


def remember_folder(folder: Path) -> None:
    """A folder this process writes to (the session's repository), named when a full disk's
    error names no file (git's 'unable to write file x' does not say where x is)."""
    if folder not in _FOLDERS:
        _FOLDERS.insert(0, folder)


def _existing(path: Path) -> Path:
    """`path`'s nearest folder that exists (a file not yet made is in a folder that is)."""
    folder = path if path.is_dir() else path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _free(folder: Path) -> tuple[int, bool] | None:
    """(bytes free to this user, read-only) of the file system holding `folder`."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize, bool(stats.f_flag & os.ST_RDONLY)


def _guess_needed(path: Path | None) -> int:
    """How much a write of `path` needed when the writer did not say: the whole file again
    (git rewrites index.lock as the index; our temp files stand for their target), at least
    MIN_GUESS (a run record's line, git's objects and logs)."""
    size = 0
    if path is not None:
        target = path
        if path.name.endswith(".lock"):
            target = path.with_name(path.name[: -len(".lock")])
        elif path.name.endswith(".tui-engineer-new"):  # .NAME.tui-engineer-new
            target = path.with_name(path.name[1 : -len(".tui-engineer-new")])
        elif path.name.endswith(".tui-engineer-tmp"):  # .NAME.HEX.tui-engineer-tmp
            target = path.with_name(path.name[1:].rsplit(".", 2)[0])
        try:
            size = target.stat().st_size
        except OSError:
            size = 0
    return max(size, MIN_GUESS)


MIN_GUESS = 1024 * 1024
BLOCK = 4096  # a file takes whole blocks of its file system (4 KB on most)


def on_disk(sizes: list[int]) -> int:
    """What files of these sizes take on disk: each rounded up to whole blocks."""
    return sum(-(-n // BLOCK) * BLOCK for n in sizes)


def room(path: Path, needed: int | None = None, kind: int = errno.ENOSPC) -> str:
    """What is full and by how much: 'No space left on device in FOLDER (X free, Y needed)'.
    `needed` None: guessed from the file (see _guess_needed) and said as a guess."""
    folder = _existing(path)
    found = _free(folder)
    if found is not None and found[1]:
        kind = errno.EROFS
    if kind == errno.EROFS:
        return f"{NO_ROOM[kind]}: {folder} cannot be written"
    if found is None:
        return f"{NO_ROOM[kind]} in {folder}"
    free = found[0]
    guessed = needed is None
    need = _guess_needed(path if path != folder else None) if needed is None else needed
    if kind == errno.EDQUOT:  # the quota, not the disk: its free space says nothing
        amount = f"about {_size(need)}" if guessed else _size(need)
        return f"{NO_ROOM[kind]} in {folder} ({amount} needed beyond your quota)"
    if guessed and need <= free:
        return f"{NO_ROOM[kind]} in {folder} ({_size(free)} free, more than that needed)"
    if need <= free:  # the inodes, folders and the copy beside a file take room too
        return (
            f"{NO_ROOM[kind]} in {folder} ({_size(free)} free, {_size(need)} to write: about "
            f"{_size(need + SLACK)} needed with the file system's own share)"
        )
    amount = f"about {_size(need)}" if guessed else _size(need)
    return f"{NO_ROOM[kind]} in {folder} ({_size(free)} free, {amount} needed)"


SLACK = 64 * 1024  # what writing files takes beyond their blocks: inodes, folders, git's own


def no_room(folder: Path, needed: int, doing: str, then: str) -> DiskFull | None:
    """DiskFull when the file system holding `folder` is read-only or has less than `needed`
    bytes (each file's, rounded up to whole blocks) and SLACK free: a command that failed
    there (git says only 'unable to write file') ran out of room; else None. `doing` says
    what failed, `then` what is so and what to do."""
    found = _free(folder)
    if found is None:
        return None
    if not found[1] and found[0] >= needed + SLACK:
        return None
    return DiskFull(f"{doing}: {room(folder, needed)}. {then}")


def from_os_error(
    err: OSError, doing: str, then: str, needed: int | None = None
) -> DiskFull | None:
    """DiskFull for an OSError that is ENOSPC, EDQUOT or EROFS: the folder of its file and
    the room (`needed` bytes, else a guess), else None."""
    if err.errno not in NO_ROOM:
        return None
    where = _where(err)
    said = room(where, needed, err.errno) if where else NO_ROOM[err.errno]
    return DiskFull(f"{doing}: {said}. {then}")


def _where(err: OSError) -> Path | None:
    name = err.filename if err.filename is not None else err.filename2
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    if isinstance(name, str) and name:
        return Path(name).absolute()
    return _fullest()


def _fullest() -> Path | None:
    """Of the folders a session writes to (its repository, the cache, the temp folder), the
    one read-only or with the least room: where a write that named no file failed."""
    import platformdirs  # here: base/ is imported by every command, this only on a full disk

    candidates = [*_FOLDERS, Path.cwd(), platformdirs.user_cache_path("tui-engineer")]
    candidates.append(Path(tempfile.gettempdir()))
    measured = [(f, _free(_existing(f))) for f in candidates]
    known = [(f, m) for f, m in measured if m is not None]
    if not known:
        return None
    return min(known, key=lambda fm: (not fm[1][1], fm[1][0]))[0]


_QUOTED = re.compile(r"'(/[^']+)'|\"(/[^\"]+)\"|(?:^|\s)(/\S+?)(?::|\s|$)")


_STREAM = re.compile(r"^\s*(stderr|stdout):\s*'?")


def _named_in(line: str) -> Path | None:
    """The absolute path a tool's error line names (git: Unable to create '/r/.git/x.lock')."""
    match = _QUOTED.search(line)
    if match is None:
        return None
    return Path(next(g for g in match.groups() if g))


# git's own words for ENOSPC where it does not give strerror's ("sha1 file '…/index.lock'
# write error. Out of diskspace", from git status refreshing the index).
_GIT_SAYS = {"Out of diskspace": errno.ENOSPC}


def disk_trouble(err: BaseException, where: Path | None = None) -> DiskFull | None:
    """DiskFull when `err`, or an error it came from, is a full, over-quota or read-only disk:
    an OSError with that errno, or a command (git) whose words say so; with the folder and the
    room needed (`where`: the folder the command wrote to, when its words name none)."""
    seen: set[int] = set()
    cause: BaseException | None = err
    then = "Free some space (or make it writable), then start tui-engineer again."
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, DiskFull):
            return cause
        if isinstance(cause, OSError) and (full := from_os_error(cause, "Writing failed", then)):
            return full
        words = {**{w: k for k, w in NO_ROOM.items()}, **_GIT_SAYS}
        said = [(kind, w) for w, kind in words.items() if w in str(cause)]
        if said:
            line = next(ln for ln in str(cause).splitlines() if said[0][1] in ln)
            folder = _named_in(line) or where or _fullest()
            room_said = room(folder, None, said[0][0]) if folder else NO_ROOM[said[0][0]]
            words = _STREAM.sub("", line).strip(" '")[:300]  # GitCommandError's "stderr: '"
            return DiskFull(f"Writing failed: {room_said}; {words}. {then}")
        cause = cause.__cause__ or cause.__context__
    return None


def remove_tree(path: Path) -> None:
    """Delete the folder at `path` and all it holds, errors ignored (what cannot be deleted
    stays), however deep it goes: Python 3.11's rmtree walks by recursion, and a test may nest
    folders past its limit (RecursionError, which `ignore_errors` does not catch); `rm -rf`
    walks them in C."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", str(path)], capture_output=True, check=False)
