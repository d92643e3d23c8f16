"""Where the repository map's cache lives (one file per repository, found from its origin so a
second clone reuses the first's) and what it holds: symbols by git blob id (context/repomap.py
builds with it).

The cache is an SQLite database (stdlib `sqlite3`), queried as a build and a prompt need it:
a build asks which of the files' blobs it knows (their line counts), a prompt the rows of the
few files it shows and of those whose rows hold a name it looks for. Loading it whole cost
the size of every file's symbols in memory (~30 MiB at 40,000 files) for each build."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from hashlib import sha1
from pathlib import Path

import platformdirs

# 5: SQLite; 4: no stats per folder (git vouches); 3: rows packed per file; keyed by git's
# blob id; the rows are marshalled, whose format may change between Python versions
CACHE_VERSION = 5_00_00 + sys.version_info[0] * 100 + sys.version_info[1]  # user_version
LOOKUP = 500  # blob ids per query (well under SQLite's limit on a statement's parameters)
SCAN = 4_000  # more blob ids than this are found by one pass over the table (~4x faster)
_BROKEN = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)  # made again, not given up on
_SCHEMA = (
    "CREATE TABLE symbols (blob TEXT PRIMARY KEY, lines INTEGER NOT NULL,"
    " packed BLOB NOT NULL, seen INTEGER NOT NULL)",
    "CREATE INDEX symbols_seen ON symbols (seen)",
)
# A whole commit's map as the last complete build of it found it (context/map_memo.py). Made
# where missing, so a cache of this version made before it is kept (an older one ignores it).
_TREES = (
    "CREATE TABLE IF NOT EXISTS trees (id TEXT PRIMARY KEY, files BLOB NOT NULL)",
    # How many saves pruned entries: a map built before one may name what it pruned.
    "CREATE TABLE IF NOT EXISTS prunes (n INTEGER NOT NULL)",
)
# A session's base, its steps prepared side by side (3), the next session's: ~1 MB each at 40,000.
TREES_KEPT = 8
PRUNE_PAST = 3  # entries held, in trees' worth, before the least recently used go


def cache_file(root: Path) -> Path:
    """Where the map of the repository at `root` is cached: one file per repository, not per
    folder, so a second clone (of the first, or of the same remote) reuses what the first
    parsed (its entries are keyed by blob id; each folder keeps stats of its own)."""
    origin = repository_origin(root.resolve())
    key = sha1(origin.encode()).hexdigest()[:10]
    name = origin.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "repo"
    return platformdirs.user_cache_path("tui-engineer") / "repomap" / f"{name}-{key}.sqlite"


def _origin_url(root: Path) -> str:
    """The repository's own `remote.origin.url`, read from its config file (no git process:
    a one-edit session's git calls are counted, tests/session/test_session_cost.py)."""
    import git  # here: GitPython's import is not paid by whoever imports the map alone

    try:
        with git.Repo(root) as repo:
            reader = repo.config_reader("repository")
            return str(reader.get_value('remote "origin"', "url", default=""))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, OSError, ValueError):
        return ""


def repository_origin(root: Path) -> str:
    """What names the repository at `root` across clones: its origin remote's URL (a local one
    as the folder it names, so a clone of a folder meets the folder's own), else its folder."""
    url = _origin_url(root)
    if not url:
        return str(root)
    url = url.removeprefix("file://")
    if "://" not in url and not re.match(r"^[^/]+:", url):  # a folder, not user@host:path
        local = (root / url).resolve()
        url = str(local.parent if local.name == ".git" else local)
    return url.rstrip("/").removesuffix(".git").rstrip("/")


class MapCache:
    """Symbols by content: git's blob id -> (lines, packed rows), in the database at `path`,
    plus what this build parsed and has not saved. Nothing per folder: which blob each file
    holds comes from git (its index, and its own stat check for the files changed since), so
    a new shadow, a checkout or a second clone finds them with no stats of its own. Without a
    database (a read-only cache folder, a broken file) it holds only what this build parsed:
    that costs speed, never correctness."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.new: dict[str, tuple[int, bytes]] = {}  # parsed by this build, not yet saved
        self._lock = threading.Lock()  # one connection, used by whichever thread asks
        self._db = _open(path)
        self.prunes = self._prunes()  # as this build found the cache: see keep_tree

    def lines_of(self, blobs: Sequence[str]) -> dict[str, int]:
        """blob id -> lines, for those of `blobs` the cache holds."""
        found = {blob: self.new[blob][0] for blob in blobs if blob in self.new}
        rest = [blob for blob in blobs if blob not in found]
        if len(rest) > SCAN:
            # Keyed by the caller's own strings: the database's copies go as they are read.
            wanted = {blob: blob for blob in rest}
            with self._lock:  # row by row: not every entry's id at once
                for blob, lines in _each(self._db, "SELECT blob, lines FROM symbols"):
                    if (ours := wanted.get(blob)) is not None:
                        found[ours] = lines
            return found
        for start in range(0, len(rest), LOOKUP):
            chunk = rest[start : start + LOOKUP]
            marks = ",".join("?" * len(chunk))
            found.update(
                self._query(f"SELECT blob, lines FROM symbols WHERE blob IN ({marks})", chunk)
            )
        return found

    def packed(self, blob: str) -> bytes:
        """The packed rows of `blob`; empty when the cache no longer holds it (another
        session's save pruned it: the file is shown without its symbols)."""
        if blob in self.new:
            return self.new[blob][1]
        found = self._query("SELECT packed FROM symbols WHERE blob = ?", (blob,))
        return found[0][0] if found else b""

    def holding(self, words: Sequence[bytes]) -> Iterator[tuple[str, bytes]]:
        """(blob id, packed rows) of the entries whose rows may hold any of `words` (names are
        UTF-8 in the packed bytes: a yes is checked on the rows)."""
        for blob, (_, packed) in self.new.items():
            if any(word in packed for word in words):
                yield blob, packed
        if not words:
            return
        where = " OR ".join("instr(packed, ?) > 0" for _ in words)
        for blob, packed in self._query(f"SELECT blob, packed FROM symbols WHERE {where}", words):
            if blob not in self.new:
                yield blob, packed

    def add(self, blob: str, lines: int, packed: bytes) -> None:
        self.new[blob] = (lines, packed)

    def save(self, used: Iterable[str]) -> None:
        """Written when this build parsed something new: its new entries. Once the cache holds
        more than PRUNE_PAST times the entries this build used (`used`), it keeps those, and as
        many of the others (the most recently used first) as it used: a branch switched to and
        back, or the files a session's steps changed, are still found, and the cache stays
        within a few times the size of one tree. The entries used are marked so only then:
        marking each of 40,000 rows rewrote them all (0.4-0.6 s) on every save, and a session
        saves at each prompt whose step changed a file."""
        if not self.new or self._db is None:
            return
        used = set(used)
        try:
            with self._lock, self._db:  # one transaction: another session sees all or nothing
                seen = self._db.execute("SELECT coalesce(max(seen), 0) + 1 FROM symbols")
                now = seen.fetchone()[0]
                self._db.executemany(
                    "INSERT OR REPLACE INTO symbols VALUES (?, ?, ?, ?)",
                    ((blob, lines, packed, now) for blob, (lines, packed) in self.new.items()),
                )
                held = self._db.execute("SELECT count(*) FROM symbols").fetchone()[0]
                if held > PRUNE_PAST * max(len(used), 1):
                    self._prune(used, now)
        except sqlite3.Error:
            return  # busy past the timeout, a full disk: the next build saves them
        self.new = {}

    def _prune(self, used: set[str], now: int) -> None:
        """Mark the entries `used` as seen `now`, then keep as many others as there are of them,
        the most recently seen (the caller holds the lock and the transaction)."""
        assert self._db is not None
        self._db.executemany("UPDATE symbols SET seen = ? WHERE blob = ?", ((now, b) for b in used))
        pruned = self._db.execute(
            "DELETE FROM symbols WHERE seen < ?1 AND blob NOT IN (SELECT blob FROM"
            " symbols WHERE seen < ?1 ORDER BY seen DESC LIMIT ?2)",
            (now, len(used)),
        ).rowcount
        if pruned:  # a kept map may name an entry gone just now
            before = self._db.execute("SELECT coalesce(max(n), 0) FROM prunes").fetchone()[0]
            self._db.execute("DELETE FROM trees")
            self._db.execute("DELETE FROM prunes")
            self._db.execute("INSERT INTO prunes VALUES (?)", (before + 1,))
            if before == self.prunes:  # this build's own entries were kept: its map may be
                self.prunes = before + 1

    def _prunes(self) -> int:
        found = self._query("SELECT max(n) FROM prunes", ())
        return int(found[0][0] or 0) if found else 0

    def tree(self, commit: str) -> bytes | None:
        """The map kept for `commit` (context/map_memo.py), if any."""
        found = self._query("SELECT files FROM trees WHERE id = ?", (commit,))
        return found[0][0] if found else None

    def newest_tree(self) -> tuple[str, bytes] | None:
        """The map kept last (its commit, its bytes), if any."""
        found = self._query("SELECT id, files FROM trees ORDER BY rowid DESC LIMIT 1", ())
        return (found[0][0], found[0][1]) if found else None

    def keep_tree(self, commit: str, files: bytes) -> None:
        """Keep `commit`'s map, and the last few others (the oldest go); not when another
        build's save pruned entries since this build began (the map may name them)."""
        if self._db is None:
            return
        try:
            with self._lock, self._db:
                found = self._db.execute("SELECT max(n) FROM prunes").fetchone()
                if int(found[0] or 0) != self.prunes:
                    return
                self._db.execute("INSERT OR REPLACE INTO trees VALUES (?, ?)", (commit, files))
                self._db.execute(
                    "DELETE FROM trees WHERE rowid NOT IN"
                    " (SELECT rowid FROM trees ORDER BY rowid DESC LIMIT ?)",
                    (TREES_KEPT,),
                )
        except sqlite3.Error:
            return  # busy, a full disk: the next complete build keeps it

    def _query(self, sql: str, parameters: Sequence[object]) -> list[tuple]:
        if self._db is None:
            return []
        try:
            with self._lock:
                return self._db.execute(sql, parameters).fetchall()
        except sqlite3.Error:
            return []  # busy past the timeout, a broken file: as if not cached


def _each(db: sqlite3.Connection | None, sql: str) -> Iterator[tuple]:
    """The rows of a query, one at a time; none past an error (as if not cached)."""
    if db is None:
        return
    try:
        yield from db.execute(sql)
    except sqlite3.Error:
        return


def cached_count(path: Path) -> int:
    """How many blobs' symbols the cache at `path` holds (0 when there is none)."""
    if not path.is_file():
        return 0
    try:
        with contextlib.closing(sqlite3.connect(path, timeout=10)) as db:
            return db.execute("SELECT count(*) FROM symbols").fetchone()[0]
    except sqlite3.Error:
        return 0


def _open(path: Path) -> sqlite3.Connection | None:
    """The cache's database, made (or made again, for another version, or in place of a
    broken file) when needed; None where it cannot be opened."""
    try:
        return _connect(path)
    except sqlite3.Error as error:
        if getattr(error, "sqlite_errorcode", None) not in _BROKEN:
            return None  # busy past the timeout, a read-only folder: no cache this time
    try:
        for part in (path, path.with_name(f"{path.name}-wal"), path.with_name(f"{path.name}-shm")):
            part.unlink(missing_ok=True)
        return _connect(path)
    except (OSError, sqlite3.Error):
        return None


def _connect(path: Path) -> sqlite3.Connection | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.with_suffix(".json").unlink(missing_ok=True)  # the whole-file cache it replaced
        db = sqlite3.connect(path, timeout=10, check_same_thread=False)
        # Readers go on while another session (or the background reader) writes.
        db.execute("PRAGMA journal_mode=WAL")
        if db.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
            with db:
                db.execute("BEGIN IMMEDIATE")  # two sessions starting at once make it once
                if db.execute("PRAGMA user_version").fetchone()[0] != CACHE_VERSION:
                    db.execute("DROP TABLE IF EXISTS symbols")
                    for statement in _SCHEMA:
                        db.execute(statement)
                    db.execute(f"PRAGMA user_version = {CACHE_VERSION}")
        with db:
            for statement in _TREES:
                db.execute(statement)
        return db
    except OSError:
        return None
