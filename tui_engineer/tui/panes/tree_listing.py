"""What the repository tree lists: one folder's visible entries under git's ignore rules
(every .gitignore on the way down plus .git/info/exclude), with proposal-only paths added.

Plain Python (no Textual): listings run in worker threads."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pathspec


@dataclass(frozen=True)
class Entry:
    """One node of the tree. `on_disk` is False for paths that exist only in a proposal."""

    rel: str  # repo-relative posix path; "" is the repo root
    is_dir: bool
    on_disk: bool = True

    @property
    def name(self) -> str:
        return PurePosixPath(self.rel).name


class IgnoreRules:
    """Git's ignore rules from every .gitignore on the way down, plus .git/info/exclude.

    Thread-safe: listings and the watcher consult it from worker threads.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._lock = threading.Lock()
        self._seen: tuple[tuple[int, int] | None, ...] | None = None  # see still_fresh()

    def forget(self) -> None:
        """Drop cached rules (a .gitignore changed)."""
        with self._lock:
            self._specs.clear()

    def still_fresh(self) -> bool:
        """False, with the cache dropped, when the repo-wide ignore files (.git/info/exclude,
        the root .gitignore) changed since last asked. Two stats: cheap enough per listing, and
        it works before the watcher is up (the engine adds its records folder to the exclude
        file just as the tree first lists the root)."""
        stamps = []
        for path in (self.root / ".git" / "info" / "exclude", self.root / ".gitignore"):
            try:
                stat = path.stat()
                stamps.append((stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamps.append(None)
        now = tuple(stamps)
        with self._lock:
            if now == self._seen:
                return True
            self._seen = now
            self._specs.clear()
            return False

    def _spec(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        with self._lock:
            if rel_dir in self._specs:
                return self._specs[rel_dir]
        lines = _read_lines(self.root / rel_dir / ".gitignore")
        if rel_dir == "":
            lines = _read_lines(self.root / ".git" / "info" / "exclude") + lines
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        with self._lock:
            self._specs[rel_dir] = spec
        return spec

    def ignored_in_parent(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is ignored, assuming its parent folder is not (the deepest rule wins)."""
        parts = rel.split("/")
        if parts[0] == ".git":
            return True
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec("/".join(parts[:depth]))
            if spec is None:
                continue
            tail = "/".join(parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(tail).include
            if verdict is not None:
                return verdict
        return False

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is ignored, itself or through any of its folders."""
        parts = rel.split("/")
        for end in range(1, len(parts)):
            if self.ignored_in_parent("/".join(parts[:end]), True):
                return True
        return self.ignored_in_parent(rel, is_dir)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def list_fresh(
    root: Path, rel_dir: str, rules: IgnoreRules, extra: Iterable[str] = ()
) -> list[Entry]:
    """`list_children` with current rules: listed again if an ignore file changed meanwhile."""
    extra = list(extra)
    rules.still_fresh()
    entries = list_children(root, rel_dir, rules, extra)
    if not rules.still_fresh():
        entries = list_children(root, rel_dir, rules, extra)
    return entries


def list_children(
    root: Path, rel_dir: str, rules: IgnoreRules, extra: Iterable[str] = ()
) -> list[Entry]:
    """The visible entries of one folder, folders first, plus `extra` proposal-only paths.

    `extra` are repo-relative paths (not necessarily on disk) whose ancestors should appear here.
    """
    entries: dict[str, Entry] = {}
    prefix = f"{rel_dir}/" if rel_dir else ""
    try:
        with os.scandir(root / rel_dir) as scan:
            for item in scan:
                # Symlinked folders stay leaves: following them can loop or leave the repo.
                is_dir = item.is_dir(follow_symlinks=False)
                rel = prefix + item.name
                if not rules.ignored_in_parent(rel, is_dir):
                    entries[rel] = Entry(rel, is_dir)
    except OSError:
        pass  # the folder vanished or is unreadable: show what the proposal knows
    for path in extra:
        if not path.startswith(prefix) or path == rel_dir:
            continue
        head, _, rest = path[len(prefix) :].partition("/")
        rel = prefix + head
        if rel not in entries:
            entries[rel] = Entry(rel, is_dir=bool(rest), on_disk=False)
    return sorted(entries.values(), key=lambda e: (not e.is_dir, e.name.lower(), e.name))
