"""A commit's whole map, kept: the next build from that commit loads it instead of listing and
looking up 40,000 files again (issue 47).

Every prompt of a session builds a map: the first from the commit its shadow was made from,
each later one from the shadow's HEAD (that same commit until a step is accepted) plus what git
status says differs. Listing the commit's files and finding each one's symbols in the cache
took ~0.17 s at 40,000 files, ~0.3 s beside the rest of a session; loading the map kept for the
commit takes ~0.03 s. A map is kept only when its build was complete (nothing left unread: it
is what any later complete build of the commit finds) and the cache still holds every entry it
names: a save that prunes entries drops every kept map (context/map_cache.py).
"""

from __future__ import annotations

import marshal
import re
import zlib
from collections.abc import Callable
from pathlib import Path

from tui_engineer.context.file_map import FileMap
from tui_engineer.context.map_cache import MapCache

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


Kept = tuple[list[str], list[str], list[int]]  # every path (sorted), its parsed blob or "", lines


def kept_map(cache: MapCache, commit: str | None) -> Kept | None:
    """The map kept for `commit`, or None."""
    data = cache.tree(commit) if commit else None
    if data is None:
        return None
    try:
        names, blobs, lines = marshal.loads(zlib.decompress(data))
    except (ValueError, EOFError, TypeError, zlib.error):
        return None  # written by another Python's marshal: built again
    return names, blobs, lines


def keep_map(cache: MapCache, commit: str, kept: Kept) -> None:
    """Keep `kept`, a complete map of `commit`, for the next build from it."""
    cache.keep_tree(commit, zlib.compress(marshal.dumps(kept), 1))


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
