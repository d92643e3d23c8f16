"""A commit's whole map, kept: the next build from that commit loads it instead of listing and
looking up 40,000 files again (issue 47).

Every prompt of a session builds a map: the first from the commit its shadow was made from,
each later one from the shadow's HEAD (that same commit until a step is accepted) plus what git
status says differs. Listing the commit's files and finding each one's symbols in the cache
took ~0.17 s at 40,000 files, ~0.3 s beside the rest of a session; loading the map kept for the
commit takes ~0.03 s. A map is kept only when its build was complete (nothing left unread: it
is what any later complete build of the commit finds) and the cache still holds every entry it
names: a save that prunes entries drops every kept map (context/map_cache.py). A commit with no
map kept (the next session, after a step was accepted) starts from the last map kept, moved by
git's diff of the two commits' trees: only the files that diff names are looked up or read.
"""

from __future__ import annotations

import marshal
import re
import subprocess
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

from tui_engineer.base.names import exact
from tui_engineer.base.safe_git import shadow_git_full_env
from tui_engineer.context.file_map import FileMap
from tui_engineer.context.map_cache import MapCache
from tui_engineer.context.symbols import language_of

_keeping: dict[str, threading.Thread] = {}  # commit -> the thread keeping its map
_guard = threading.Lock()
MOVED_AT_MOST = 5_000  # changed files past which a kept map is not moved but built again
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


Kept = tuple[list[str], list[str], list[int]]  # every path (sorted), its parsed blob or "", lines


def kept_map(cache: MapCache, commit: str | None) -> Kept | None:
    """The map kept for `commit`, or None; one being kept meanwhile is waited for."""
    if not commit:
        return None
    with _guard:
        keeping = _keeping.get(commit)
    if keeping is not None:
        keeping.join()
    data = cache.tree(commit)
    return None if data is None else _unpacked(data)


def _unpacked(data: bytes) -> Kept | None:
    try:
        names, blobs, lines = marshal.loads(zlib.decompress(data))
    except (ValueError, EOFError, TypeError, zlib.error):
        return None  # written by another Python's marshal: built again
    return names, blobs, lines


def kept_near(root: Path, cache: MapCache, commit: str) -> tuple[Kept, list[str]] | None:
    """The map kept last, moved to `commit` by what git's diff of their trees says changed
    (the next session after an accept: its commit is the last one's plus the step); (that map,
    the changed source files whose symbols the cache does not know: to read). None when no map
    is kept, git cannot compare them (a commit of another clone), or too much changed."""
    newest = cache.newest_tree()
    kept = _unpacked(newest[1]) if newest is not None and newest[0] != commit else None
    if newest is None or kept is None:
        return None
    done = subprocess.run(
        ["git", "diff-tree", "-r", "-z", "--no-renames", newest[0], commit],
        cwd=root, capture_output=True, check=False, env=shadow_git_full_env(),
    )  # fmt: skip
    fields = exact(done.stdout).split("\0")
    if done.returncode != 0 or len(fields) > 2 * MOVED_AT_MOST:
        return None
    files = {rel: (blob, count) for rel, blob, count in zip(*kept, strict=True)}
    sources: dict[str, str] = {}  # changed source files: path -> blob
    for meta, rel in zip(fields[0::2], fields[1::2], strict=False):
        mode, blob = meta.split(" ")[1], meta.split(" ")[3]  # ":old new oldblob newblob status"
        files.pop(rel, None)
        if mode in ("100644", "100755") and language_of(rel) is not None:
            sources[rel] = blob
        elif mode not in ("000000", "160000"):  # not gone, not a submodule: listed unparsed
            files[rel] = ("", 0)
    known = cache.lines_of(list(sources.values()))
    for rel, blob in sources.items():
        files[rel] = (blob, known[blob]) if blob in known else ("", 0)
    names = sorted(files)
    moved = (names, [files[n][0] for n in names], [files[n][1] for n in names])
    return moved, [rel for rel, blob in sources.items() if blob not in known]


def keep_map(cache: MapCache, commit: str, kept: Kept) -> None:
    """Keep `kept`, a complete map of `commit`, for the next build from it: in a thread of its
    own (packing it takes 0.05 s at 40,000 files, which the build that made it need not wait
    for); a build from the same commit meanwhile waits for it (`kept_map`)."""

    def keep() -> None:
        try:
            cache.keep_tree(commit, zlib.compress(marshal.dumps(kept), 1))
        finally:
            with _guard:
                _keeping.pop(commit, None)

    thread = threading.Thread(target=keep, name="keep-map", daemon=True)
    with _guard:
        _keeping[commit] = thread
    thread.start()


def from_kept(
    base: str,
    kept: Kept,
    changed: list[str],
    cache: MapCache,
    listed: Callable[[str, str], tuple[bool, bool]],
) -> tuple[dict[str, FileMap], list[str]]:
    """The files of a kept map, less what `changed` (git status's names) says differs from
    its commit: those are looked at as they are now (`listed`: whether a file is listed, and
    parsed); (the files, those of them to read)."""
    names, blobs, lines = kept
    files = {
        rel: FileMap(rel, count, blob, True, cache) if blob else FileMap(rel)
        for rel, blob, count in zip(names, blobs, lines, strict=True)
    }
    unknown: list[str] = []
    changed = list(dict.fromkeys(changed))
    for rel in changed:
        files.pop(rel, None)
    for rel in changed:
        shown, parse = listed(base, rel)
        if shown:
            files[rel] = FileMap(rel)
        if shown and parse:
            unknown.append(rel)
    if changed:
        files = dict(sorted(files.items()))
    return files, unknown


def as_kept(files: dict[str, FileMap]) -> Kept:
    """`files` as a map is kept: every path, its blob where parsed, its lines."""
    return (
        list(files),
        [mapped.blob if mapped.parsed else "" for mapped in files.values()],
        [mapped.lines for mapped in files.values()],
    )


def detached_head(root: Path) -> str | None:
    """The commit a shadow's HEAD names (it is detached there: its file holds the id); None
    where HEAD is a branch, or `root` is not the top of a repository of its own."""
    try:
        text = (root / ".git" / "HEAD").read_text().strip()
    except OSError:  # a folder, not a repository; a worktree's .git file
        return None
    return text if _SHA.match(text) else None
