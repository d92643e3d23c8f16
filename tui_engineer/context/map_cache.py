"""Where the repository map's cache lives (one file per repository, found from its origin so a
second clone reuses the first's) and what it holds: symbols by git blob id (context/repomap.py
builds with it)."""

from __future__ import annotations

import marshal
import os
import re
import sys
import threading
from hashlib import sha1
from pathlib import Path

import platformdirs

# 4: no stats per folder (git vouches); 3: rows packed per file; keyed by git's blob id;
# marshal's format may change between Python versions
CACHE_VERSION = (4, sys.version_info[:2])


def cache_file(root: Path) -> Path:
    """Where the map of the repository at `root` is cached: one file per repository, not per
    folder, so a second clone (of the first, or of the same remote) reuses what the first
    parsed (its entries are keyed by blob id; each folder keeps stats of its own)."""
    origin = repository_origin(root.resolve())
    key = sha1(origin.encode()).hexdigest()[:10]
    name = origin.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "repo"
    return platformdirs.user_cache_path("tui-engineer") / "repomap" / f"{name}-{key}.json"


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
    """Symbols by content: git's blob id -> (lines, packed rows). Nothing per folder: which
    blob each file holds comes from git (its index, and its own stat check for the files
    changed since), so a new shadow, a checkout or a second clone finds them with no stats of
    its own to load or save."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, tuple[int, bytes]] = {}  # blob id -> (lines, packed rows)
        self.used: set[str] = set()  # the blobs this build found
        self.changed = False  # new entries: saved
        try:
            version, entries = marshal.loads(path.read_bytes())
            if version == CACHE_VERSION and isinstance(entries, dict):
                self.entries = entries
        except (OSError, ValueError, EOFError, TypeError):
            pass  # no cache yet, or a broken one: build from scratch

    def save(self) -> None:
        """Written when this build parsed something new: the entries it used, then as many of
        the others (the most recent first) as it used, so a branch switched to and back, or the
        files a session's steps changed, are still found, and the cache stays near the size of
        one tree."""
        if not self.changed:
            return
        others = [key for key in reversed(self.entries) if key not in self.used]
        kept = set(others[: len(self.used)]) | self.used
        entries = {key: value for key, value in self.entries.items() if key in kept}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Unique per thread: a session maps the next step while the human reviews this one.
            unique = f"{os.getpid()}.{threading.get_ident()}"
            temporary = self.path.with_name(f"{self.path.name}.{unique}.tmp")
            temporary.write_bytes(marshal.dumps((CACHE_VERSION, entries)))
            os.replace(temporary, self.path)
        except OSError:
            pass  # a read-only cache folder costs speed, never correctness
