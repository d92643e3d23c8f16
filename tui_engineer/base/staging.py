"""Staging a shadow's files (`git add -A`) only when something wrote there since the last time.

Listing a proposal, bracketing a test run, choosing the tests a change affects and saving a
step's tree each stage the shadow first, and `git add -A` looks at every file: 0.05 s at 40,000
files, about ten times a step (issue 47). Most of them find what the one before found: nothing
wrote in between. Who could have is open-ended (the model's edits, test runs in any sandbox, the
project's checks and hooks, the human's edits and shell, MCP tools), so no writer is asked to
say so: the kernel says. An inotify watch on every folder of the shadow but its .git hears any
write, create, delete, move or change of mode made there by any process, its own sandbox's
included. A staging is skipped when nothing was heard since the last one, or git ignores all
that was (a test run's __pycache__, .pytest_cache: one `git check-ignore`, 0.006 s at 40,000
files), and git's index and the shadow's exclude file are the very files that staging left (no
other git command rewrote the index since, e.g. a reset or a read-tree).

Events are queued by the kernel inside the writer's own system call, so one that returned before
a check is heard by it. Writes through a memory map make no event of their own: they are heard
when the mapped file is let go (its unmapping, the process's end), so a process still holding
one is not. The staging that ends a test run therefore runs whatever was heard, unless the
sandbox ended every process the run started (bubblewrap's PID namespace ends with the run): then
every map was let go, and heard, before it (Shadow.tests_ended, Sandbox.ends_every_process).
Commits inside a submodule are written in .git/modules: no shadow with submodules checked out
is watched.
Where there is no inotify (not Linux), past the user's watch limit, or once the queue
overflowed, every staging runs, as it did before. ctypes rather than a package: three system
calls, and this runs on every staging.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tui_engineer.base.safe_git import index_lock, shadow_git_full_env

T = TypeVar("T")

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x4000, 0x8000, 0x40000000
_IN_ONLYDIR, _IN_DONT_FOLLOW, _IN_EXCL_UNLINK = 0x01000000, 0x02000000, 0x04000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_HEARD = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE
    | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF
)  # fmt: skip
_MASK = _HEARD | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name
NAMED_MAX = 1000  # heard paths asked about (are they all ignored?); more: staged at once


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1, libc.inotify_add_watch  # noqa: B018 - absent off Linux
    except (OSError, AttributeError):
        return None
    libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    return libc


_LIBC = _libc()


class Unwatched(Exception):
    """The shadow cannot be watched (no inotify, the watch limit, an overflowed queue)."""


class TreeWatch:
    """Every folder under `top` but its .git, heard through one inotify instance."""

    def __init__(self, top: Path) -> None:
        if _LIBC is None:
            raise Unwatched("no inotify")
        self.top = top
        self.top_bytes = os.fsencode(top)
        self.fd = _LIBC.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self.fd < 0:
            raise Unwatched(os.strerror(ctypes.get_errno()))
        self.folders: dict[int, bytes] = {}  # watch descriptor -> folder
        self.left: tuple[object, ...] | None = None  # what the last staging left (_stamp)
        try:
            self._add_tree(os.fsencode(top), top=True)
        except Unwatched:
            self.close()
            raise

    def _add_tree(self, folder: bytes, top: bool = False) -> None:
        """Watch `folder` and every folder below it (not the top's .git), each before it is
        walked: one made during the walk is heard by the watch already on its parent. A loop,
        not recursion: a test may nest folders deeper than Python's recursion limit."""
        assert _LIBC is not None
        pending = [folder]
        while pending:
            current = pending.pop()
            wd = _LIBC.inotify_add_watch(self.fd, current, _MASK)
            if wd < 0:
                code = ctypes.get_errno()
                if code in (errno.ENOENT, errno.ENOTDIR) and not (top and current == folder):
                    continue  # gone meanwhile: its removal is heard on its parent
                raise Unwatched(os.strerror(code))  # ENOSPC: the user's watch limit
            self.folders[wd] = current
            try:
                entries = list(os.scandir(current))
            except OSError:
                continue
            skip = b".git" if top and current == folder else None
            pending += [
                e.path for e in entries if e.name != skip and e.is_dir(follow_symlinks=False)
            ]

    def heard(self) -> frozenset[bytes] | None:
        """The paths (relative to the top) written since the last call, None when they cannot
        all be named (too many, or the top folder itself): every queued event is read (and new
        folders watched), so what happens from here on is heard by the next call."""
        names: set[bytes] | None = set()
        while True:
            try:
                data = os.read(self.fd, 64 * 1024)
            except BlockingIOError:
                return None if names is None else frozenset(names)
            offset = 0
            while offset < len(data):
                wd, mask, _, size = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + size].rstrip(b"\0")
                offset += _EVENT.size + size
                if mask & _IN_Q_OVERFLOW:
                    raise Unwatched("the event queue overflowed")
                if mask & _IN_IGNORED:
                    self.folders.pop(wd, None)  # its folder went: heard on its parent too
                    continue
                folder = self.folders.get(wd)
                if folder is not None and mask & _IN_ISDIR and mask & (_IN_CREATE | _IN_MOVED_TO):
                    self._add_tree(os.path.join(folder, name))
                names = self._named(names, folder, name)

    def _named(
        self, names: set[bytes] | None, folder: bytes | None, name: bytes
    ) -> set[bytes] | None:
        """`names` with the path of an event in `folder` added; None once that cannot be."""
        if names is None or folder is None or len(names) >= NAMED_MAX:
            return None
        path = os.path.relpath(os.path.join(folder, name), self.top_bytes)
        if path == b"." or path.startswith(b".."):  # the top folder itself
            return None
        names.add(path)
        return names

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_watches: dict[Path, TreeWatch | None] = {}  # None: not watchable, every staging runs
_guard = threading.Lock()


def stage_all(
    workdir: Path, stage: Callable[[], object] | None = None, fresh: bool = False
) -> None:
    """Stage every file of the shadow at `workdir` unless nothing was written there since the
    last staging and the index is as it left it; `fresh`: stage whatever was heard. `stage`:
    the caller's own `git add -A` of every file (for its own errors); else subprocess's.
    Written files that are all still there are staged by name (`git update-index`): git then
    looks at those alone, not at every file (0.06-0.1 s at 40,000 files)."""
    with index_lock(workdir):  # no other staging of it meanwhile (reentrant: callers hold it)
        stage = stage or functools.partial(_git, workdir, "add", "-A")
        _stage_all(Path(workdir).resolve(), stage, fresh)


def _git(workdir: Path, *args: str) -> None:
    env = shadow_git_full_env()  # never a program the shadow's config names
    subprocess.run(["git", *args], cwd=workdir, capture_output=True, check=True, env=env)


def _stage_all(key: Path, stage: Callable[[], object], fresh: bool) -> None:
    with _guard:
        known = key in _watches
        watch = _watches.get(key)
    if not known:
        watch = _start(key)
    named: list[str] | None = None  # None: every file
    try:
        heard = watch.heard() if watch is not None else None  # the queue emptied either way
        if not fresh and watch is not None and watch.left == _stamp(key) and heard is not None:
            named = _to_stage(key, heard) if heard else []
            if named == []:
                return
    except Unwatched:
        forget(key)
        with _guard:
            _watches[key] = None
        watch = None
    # From here on a write is heard by the next staging: the queue was emptied above.
    if watch is not None:
        watch.left = None  # a staging that fails leaves nothing to go by
    if named is None:
        stage()
    else:
        try:  # as `git add -A` of them, but update-index looks at no other path of the tree:
            # 0.045 s against 0.12 s at 200,000 files (0.01 against 0.025 s at 40,000) an edit
            _git(key, "update-index", "--add", "--remove", "--", *named)
        except Exception:  # noqa: BLE001 - a case named paths miss: the whole tree says why
            stage()
    if watch is not None:
        watch.left = _stamp(key)


def _to_stage(key: Path, paths: frozenset[bytes]) -> list[str] | None:
    """The files among `paths` to stage, a folder standing for its files: none when git
    ignores every one (caches a test run writes: __pycache__, .pytest_cache, logs); None
    (stage every file) past NAMED_MAX, when one the index holds is gone (a delete or a move:
    staged whole, as before; one it never held was a temporary file), inside a nested
    repository, or git's rules for other files (.gitignore). A tracked file is never ignored
    (git check-ignore reads the index), nor is a path git does not say it ignores."""
    files = _files_of(key, paths)
    if files is None:
        return None
    if not files:
        return []
    asked = subprocess.run(
        ["git", "check-ignore", "-z", "--stdin"], cwd=key, input=b"\0".join(files) + b"\0",
        capture_output=True, env=shadow_git_full_env(),
    )  # fmt: skip
    if asked.returncode not in (0, 1):  # 1: none is ignored
        return None
    rest = files - set(asked.stdout.split(b"\0")[:-1])
    top = os.fsencode(key)
    if any(_RULES & set(name.split(b"/")) for name in rest):
        return None
    gone = {name for name in rest if not os.path.lexists(os.path.join(top, name))}
    if gone and _tracked(key, gone):
        return None
    return sorted(os.fsdecode(name) for name in rest - gone)


def _tracked(key: Path, paths: set[bytes]) -> bool:
    """Whether the index holds any of `paths` (or a file under one). Those it does not hold
    were written and gone between two stagings: a temporary file renamed onto its target (as
    the edits' writer and many formatters write), which leaves nothing to stage."""
    specs = [b":(literal)" + path for path in sorted(paths)]
    asked = subprocess.run(
        ["git", "ls-files", "-z", "--", *specs], cwd=key, capture_output=True,
        env=shadow_git_full_env(),
    )  # fmt: skip
    return asked.returncode != 0 or bool(asked.stdout)


# A path with one of these in it: staged with every file. Inside a nested repository; or a
# file whose rules (what git ignores, how it reads a file) are about other files too.
_RULES = {b".git", b".gitignore", b".gitattributes", b".gitmodules"}


def _files_of(key: Path, paths: frozenset[bytes]) -> set[bytes] | None:
    """`paths` with each folder among them replaced by the files under it (None past
    NAMED_MAX)."""
    top = os.fsencode(key)
    files: set[bytes] = set()
    for path in paths:
        full = os.path.join(top, path)
        if not os.path.isdir(full) or os.path.islink(full):
            files.add(path)
            continue
        pending = [full]  # a loop, not os.walk: Python 3.11's recurses (see _add_tree)
        while pending:
            try:
                entries = list(os.scandir(pending.pop()))
            except OSError:
                return None
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    files.add(os.path.relpath(entry.path, top))
            if len(files) > NAMED_MAX:
                return None
    return files


def staged_now(workdir: Path) -> None:
    """Watch `workdir` from now on, its index taken as a staging of its files: for a shadow
    whose files and index git has just written from one commit (a checkout, a reset), which
    `git add -A` would only stage again as they are. Its first listing then stages nothing."""
    key = Path(workdir).resolve()
    with index_lock(workdir):
        forget(key)
        watch = _start(key)
        if watch is not None:
            watch.left = _stamp(key)


def index_kept(workdir: Path, run: Callable[[], T]) -> T:
    """Run `run`, a git command that rewrites the index without changing what it lists
    (`write-tree` saves its tree cache there): a staging current before it still is after,
    and `index_stamp` still names the listing it had."""
    key = Path(workdir).resolve()
    with index_lock(workdir):
        with _guard:
            watch = _watches.get(key)
        before = _stamp(key)
        current = watch is not None and watch.left is not None and watch.left == before
        result = run()
        after = _stamp(key)
        if current and watch is not None:
            watch.left = after
        with _guard:
            _rewritten[key] = (after, _listing(key, before))
    return result


def _start(key: Path) -> TreeWatch | None:
    watch: TreeWatch | None = None
    # Submodules (declared, or checked out in .git/modules): their own commits are not heard.
    if not ((key / ".gitmodules").exists() or (key / ".git" / "modules").is_dir()):
        try:
            watch = TreeWatch(key)
        except Unwatched:
            watch = None
    with _guard:
        _watches[key] = watch
    return watch


# key -> (the index's stamp after an `index_kept` command, the stamp of the listing it kept)
_rewritten: dict[Path, tuple[tuple[object, ...], tuple[object, ...]]] = {}


def index_stamp(workdir: Path) -> tuple[object, ...]:
    """Which listing `workdir`'s index holds: another once a git command rewrote the index,
    but not for one that `index_kept` ran (a test run's start and end each write a tree: a
    proposal's diff asked after them, 0.08 s at 200,000 files, is the one asked before)."""
    key = Path(workdir).resolve()
    with _guard:
        return _listing(key, _stamp(key))


def _listing(key: Path, stamp: tuple[object, ...]) -> tuple[object, ...]:
    """The stamp of the listing an index with `stamp` holds (the caller holds _guard)."""
    kept = _rewritten.get(key)
    return kept[1] if kept is not None and kept[0] == stamp else stamp


def _stamp(key: Path) -> tuple[object, ...]:
    """Which index and exclude file the shadow has (git replaces a file to change it)."""
    stamp: list[object] = []
    for part in (key / ".git" / "index", key / ".git" / "info" / "exclude"):
        try:
            info = part.stat()
        except OSError:
            stamp.append(None)
            continue
        stamp.append((info.st_ino, info.st_mtime_ns, info.st_size, info.st_ctime_ns))
    return tuple(stamp)


def forget(workdir: Path) -> None:
    """Stop watching `workdir` (its shadow is removed); a new shadow there is watched anew."""
    key = Path(workdir).resolve()
    with _guard:
        watch = _watches.pop(key, None)
        _rewritten.pop(key, None)
    if watch is not None:
        watch.close()
