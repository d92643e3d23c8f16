"""The repository map: every file git sees, and the symbols of each source file.

Symbols are cached by content in the per-user cache folder (one file per repository), keyed by
git's blob id, so a warm build parses only the files whose bytes are new. A file git says is
as HEAD holds it (HEAD's tree, less what `git status` finds changed: context/git_listing.py)
is not even read: a session's fresh shadow, a checkout, a branch switch or a reverted change
reuses what an earlier session parsed. Only the files git does not vouch for (new, changed: a
step's own edits) are read and hashed. A session's first map, built before anything is edited
in its new shadow, lists the files from the commit the shadow was made from: no status either.

The cache is an SQLite database (context/map_cache.py): a build asks it which blobs it knows,
and a file's symbols are read from it when a prompt asks for them, so a map holds a blob id per
file, not every file's symbols. Each file's rows are `marshal` data: they load several times
faster than JSON and, like the .pyc files Python keeps beside the code, they live in the user's
own folder and are only ever read back by the same Python version."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from hashlib import sha1
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from tui_engineer.context.file_map import FileMap, Row
from tui_engineer.context.git_listing import (
    listed_in_commit,
    listed_since_head,
    uncommitted_names,
)
from tui_engineer.context.map_cache import LOOKUP, MapCache, cache_file
from tui_engineer.context.map_memo import (
    as_kept,
    detached_head,
    from_kept,
    keep_map,
    kept_map,
    kept_near,
)
from tui_engineer.context.symbols import Symbol, language_of, parse_symbols

MAX_PARSED_BYTES = 1_000_000  # bigger source files (generated, minified) are listed, not parsed
NAMED_MAX = 200  # files the request names that a bounded build reads whatever the bound
BATCH = 500  # files read and parsed between looks at a build's time bound (in this process)
POOL_THRESHOLD = 1_500  # files to parse before a build uses worker processes
MAX_WORKERS = 4


@dataclass
class RepoMap:
    root: Path
    files: dict[str, FileMap]  # every file git sees, sorted by path
    parsed: int = 0  # files parsed in this build (the rest came from the cache)
    read: int = 0  # source files whose bytes this build read (the rest: stats or git vouched)
    reused: int = 0  # source files mapped from the cache without being parsed again
    # Source files not read within the build's time bound (listed by name, no symbols yet):
    # the map was cut short, and the prompt says so (context/packing.py).
    left: int = 0
    cache: MapCache | None = field(default=None, repr=False)  # where the files' rows are
    # The files git status named as differing from HEAD when it was built (none when listed
    # from the commit itself); None: not known.
    uncommitted: list[str] | None = None

    def defining(self, name: str) -> list[tuple[str, Symbol]]:
        """(path, symbol) for every definition of `name`: a bare name ("windowed"), a
        qualified one ("Spam.eggs") or the tail of one ("eggs" finds Spam.eggs)."""
        return self.defining_any([name]).get(name, [])

    def defining_any(self, names: Iterable[str]) -> dict[str, list[tuple[str, Symbol]]]:
        """`defining` for several names in one pass over the map (no index is kept: a request
        names a few words, and indexing 100,000 symbols would cost more than the pass)."""
        wanted = set(names)
        encoded = sorted({name.rsplit(".", 1)[-1].encode() for name in wanted})
        found: dict[str, list[tuple[str, Symbol]]] = {}
        for path, packed in self._holding(encoded):
            for row in marshal.loads(packed):
                name = row[0]
                short = name[name.rfind(".") + 1 :]
                if name in wanted or short in wanted:
                    key = name if name in wanted else short
                    found.setdefault(key, []).append((path, Symbol._make(row)))
                    if short in wanted and short != key:
                        found.setdefault(short, []).append((path, Symbol._make(row)))
        return found

    def symbols(self) -> Iterator[tuple[str, Symbol]]:
        for path, entry in self.files.items():
            for row in entry.rows:
                yield path, Symbol._make(row)

    def _holding(self, words: list[bytes]) -> list[tuple[str, bytes]]:
        """(path, packed rows) of the files whose rows may hold any of `words`, by path (one
        query of the cache, not a look at every file's rows)."""
        if not words or self.cache is None:
            return []
        hits = dict(self.cache.holding(words))
        return [(p, hits[e.blob]) for p, e in self.files.items() if e.blob in hits]


def blob_id(data: bytes) -> str:
    """The id git gives a file with these bytes (a blob's SHA-1)."""
    return sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _read_source(full: str) -> bytes | None:
    try:
        with open(full, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return None if b"\0" in data[:8192] else data


def _parsed_rows(rel: str, data: bytes) -> tuple[int, tuple[Row, ...]] | None:
    """(lines, symbol rows) of one file; None when its language has no grammar here."""
    symbols = parse_symbols(rel, data)
    if symbols is None:
        return None
    lines = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    return lines, tuple(tuple(s) for s in symbols)  # type: ignore[misc]


def parse_chunk(items: list[tuple[str, bytes]]) -> list[tuple[int, tuple[Row, ...]] | None]:
    return [_parsed_rows(rel, data) for rel, data in items]


def _in_worker(items: list[tuple[str, bytes]]) -> list[tuple[int, tuple[Row, ...]] | None]:
    command = [sys.executable, "-m", "tui_engineer.context.parse_worker"]
    done = subprocess.run(command, input=marshal.dumps(items), capture_output=True, check=True)
    results = marshal.loads(done.stdout)
    if len(results) != len(items):
        raise ValueError("the parse worker answered for other files")
    return results


def _parse_all(items: list[tuple[str, bytes]]) -> list[tuple[int, tuple[Row, ...]] | None]:
    """Parse many files; a cold build of a big repository uses the other cores too (tree-sitter
    holds the GIL while it parses, so threads alone would not help): worker processes
    (context/parse_worker.py) take all but one share, this process the last."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(items) < POOL_THRESHOLD or workers < 2:
        return parse_chunk(items)
    size = -(-len(items) // workers)
    chunks = [items[i : i + size] for i in range(0, len(items), size)]
    with ThreadPoolExecutor(len(chunks) - 1) as pool:
        others = [pool.submit(_in_worker, chunk) for chunk in chunks[1:]]
        results = parse_chunk(chunks[0])
        for chunk, future in zip(chunks[1:], others, strict=True):
            try:
                results += future.result()
            except (OSError, ValueError, EOFError, subprocess.CalledProcessError):
                results += parse_chunk(chunk)  # no worker here (a sandbox, a limit): do it here
    return results


def _listed(root: str, rel: str) -> tuple[bool, bool]:
    """(whether it is listed, whether to parse it) of a file git names: what is not a regular
    file (deleted from the tree, a folder) is not; a symlink is listed but never parsed,
    since it may point out of the repository."""
    try:
        stat = os.lstat(f"{root}/{rel}")
    except OSError:
        return False, False
    if S_ISLNK(stat.st_mode):
        return True, False
    if not S_ISREG(stat.st_mode):
        return False, False
    return True, language_of(rel) is not None and stat.st_size <= MAX_PARSED_BYTES


def _small_enough(root: str, rel: str) -> bool:
    try:
        return os.stat(f"{root}/{rel}").st_size <= MAX_PARSED_BYTES
    except OSError:
        return False


def build_map(
    root: Path,
    *,
    cache_root: Path | None = None,
    text: str = "",
    seconds: float | None = None,
    enough: Callable[[], bool] | None = None,
    committed: str | None = None,
    stage: bool = True,
) -> RepoMap:
    """The map of every file git sees under `root`. `cache_root`: the repository the cache
    belongs to (a session's shadow shares its user repository's cache). `seconds`: a time
    bound on reading the files the cache does not know (counted once they are listed: the look
    at the rest is not bounded); what git and the request already name are read first and
    always (the files `text`, a request or a step, names, and those git says are new or
    changed: the session's own edits), the rest until the bound or until `enough()` says the
    map is no longer worth waiting for (those left are counted in `left`; the next build,
    which finds the rest in the cache, goes on with them). `committed`: the commit `root`'s
    files are exactly (a shadow just made from it, nothing edited there yet): listed from it,
    without a look at the files. A map kept for the commit (a shadow's HEAD without
    `committed`), or the last one kept moved to it, stands in for the listing
    (context/map_memo.py). `stage`: False in any process but the session's own (the filler):
    its listing then never writes the shadow's index (context/git_listing.py)."""
    root = root.resolve()
    base = str(root)
    cache = MapCache(cache_file(cache_root or root))
    files: dict[str, FileMap] = {}
    commit = committed or detached_head(root)
    kept, moved, to_read = kept_map(cache, commit), None, []
    if kept is None and commit:  # the last map kept, moved to this commit by git's diff
        moved = kept_near(root, cache, commit)
    if moved is not None:
        kept, to_read = moved
    blobs: Mapping[str, str] = {}
    if kept is not None:  # the commit's map as a build kept it (context/map_memo.py)
        changed = [] if committed else uncommitted_names(root, stage=stage)
        files, unknown = from_kept(base, kept, changed, cache, _listed)
        unknown += [rel for rel in to_read if rel not in changed and _small_enough(base, rel)]
        blobs = dict.fromkeys(to_read, "")  # committed: read within the bound, as vouched
        reused = sum(1 for mapped in files.values() if mapped.parsed)
    else:
        if committed:
            (names, blobs), changed = listed_in_commit(root, committed), []
        else:
            names, blobs, changed = listed_since_head(root, commit or "HEAD", stage=stage)
        unknown, reused = _reuse(base, names, blobs, files, cache)
    left: list[str] = []
    if seconds is not None:
        # From here: a build on a loaded machine, whose listing alone took the bound, still
        # reads a share, so the next builds go on (they find what this one read in the cache).
        deadline = time.monotonic() + seconds
        unknown, rest = reading_order(unknown, text, blobs)
        parsed = _map_unknown(base, unknown, files, cache)
        done = 0
        while done < len(rest) and time.monotonic() < deadline and not (enough and enough()):
            batch = rest[done : done + BATCH]
            parsed += _map_unknown(base, batch, files, cache)
            unknown += batch
            done += len(batch)
        left = rest[done:]
    else:
        parsed = _map_unknown(base, unknown, files, cache)
    cache.save(mapped.blob for mapped in files.values() if mapped.blob)
    if (kept is None or moved) and commit and not changed and not left:  # complete: keep it
        keep_map(cache, commit, as_kept(files))
    built = RepoMap(root, files, parsed, read=len(unknown), reused=reused, left=len(left))
    built.cache, built.uncommitted = cache, changed
    return built


def _reuse(
    base: str,
    names: list[str],
    blobs: Mapping[str, str],
    files: dict[str, FileMap],
    cache: MapCache,
) -> tuple[list[str], int]:
    """Map into `files` every file git names, those the cache knows by blob with their
    symbols; (the source files it does not know, how many it knew)."""
    listed: list[tuple[str, str | None]] = []  # the source files, and their blob if vouched
    for rel in names:
        blob = blobs.get(rel)
        if blob is not None:  # git's stat check vouched for a regular file as committed
            files[rel] = FileMap(rel)
            if language_of(rel) is not None:
                listed.append((rel, blob))
            continue
        kept, parse = _listed(base, rel)
        if not kept:
            continue
        files[rel] = FileMap(rel)
        if parse:
            listed.append((rel, None))
    known = cache.lines_of([blob for _, blob in listed if blob is not None])
    unknown: list[str] = []
    reused = 0
    for rel, blob in listed:
        lines = known.get(blob) if blob is not None else None
        if lines is not None:  # parsed before, so small enough then: the same bytes now
            files[rel] = FileMap(rel, lines, blob, True, cache)  # type: ignore[arg-type]
            reused += 1
        elif blob is None or _small_enough(base, rel):
            unknown.append(rel)
    return unknown, reused


def reading_order(
    unknown: list[str], text: str, vouched: Mapping[str, str] = {}
) -> tuple[list[str], list[str]]:
    """(what is read whatever the bound: the files `text` names, by path or name, or by a word
    that is their stem, and those git does not vouch for (`vouched`: path -> blob id of the
    files git says are as committed; the rest are new or changed, as a step's edits are);
    the rest, those in a folder `text` names first)."""
    words = set(re.findall(r"[A-Za-z0-9_]+", text))
    named: list[str] = []
    near: list[str] = []
    rest: list[str] = []
    for item in unknown:
        folder, _, name = item.rpartition("/")
        if name in text or name.split(".", 1)[0] in words or item not in vouched:
            named.append(item)
        elif words.intersection(folder.split("/")):
            near.append(item)
        else:
            rest.append(item)
    # A name many folders hold (index.js, __init__.py): read within the bound like the rest.
    return named[:NAMED_MAX], named[NAMED_MAX:] + near + rest


def names_unread(repo: RepoMap, text: str) -> bool:
    """Whether `text` names (as `reading_order` does) a source file this map has not read."""
    words = set(re.findall(r"[A-Za-z0-9_]+", text))
    for rel, mapped in repo.files.items():
        name = rel.rpartition("/")[2]
        named = name in text or name.split(".", 1)[0] in words
        if named and not mapped.parsed and language_of(rel) is not None:
            return True
    return False


def _map_unknown(base: str, unknown: list[str], files: dict[str, FileMap], cache: MapCache) -> int:
    """Read and hash the files the stats did not vouch for; parse those whose bytes are new.
    Returns how many were parsed."""
    to_parse: list[tuple[str, bytes]] = []
    digests: dict[str, str] = {}
    known: dict[str, int] = {}  # blob id -> lines, of those the cache knows
    for start in range(0, len(unknown), LOOKUP):  # the cache asked a share at a time, so
        read: list[tuple[str, bytes]] = []  # only the bytes of files it does not know are held
        for rel in unknown[start : start + LOOKUP]:
            data = _read_source(f"{base}/{rel}")
            if data is not None:
                digests[rel] = blob_id(data)
                read.append((rel, data))
        known.update(cache.lines_of([digests[rel] for rel, _ in read]))
        to_parse += [(rel, data) for rel, data in read if digests[rel] not in known]
    for (rel, _), result in zip(to_parse, _parse_all(to_parse), strict=True):
        if result is not None:
            cache.add(digests[rel], result[0], marshal.dumps(result[1]))
            known[digests[rel]] = result[0]
    for rel, digest in digests.items():
        lines = known.get(digest)
        if lines is not None:
            files[rel] = FileMap(rel, lines, digest, True, cache)
    return len(to_parse)
