"""What an accept in progress is doing, written in the user's `.git` so that a crash can be
finished or undone (accept_journal.py writes it, and finishes or rolls back an accept by it).

`.git/tui-engineer-accept.json` is written (temporary file + rename, so it is whole or absent)
at the decision: with the step's files already in the user's object store (`entries`), its
message and whether to sign, everything the commit needs. It is written again with the new commit
just before the branch moves. The next start reads it:

- the branch points at the new commit: the accept got past the compare-and-swap, so it is
  finished (the step's files and index entries are written from the commit, the undo ref set);
- the branch is still at the old commit: the process was stopped after the decision and before
  the commit (during the pre-commit hook, say). A decision is never lost: the commit is made
  now from the journal (hooks included), unless the user edited the step's files since or a
  hook refuses: then it is rolled back (nothing of the user's was written yet: files come after
  the branch), and said so. A journal of an older version (no entries) is rolled back;
- the branch moved elsewhere (the user committed since): left alone, and said so.

Either way the journal is removed and one sentence says what happened. Lock files git itself
made for the accept's own ref updates, and that a kill of the whole process group left, are
removed too: only those newer than the journal, in a repository where the accepting process is
gone.

The accepting process holds `.git/tui-engineer-accept.owner` (an flock: owner.py) from before
the journal is written until it is removed. The next start finishes a journal only if it can
take that lock: a live session's accept is left alone, a dead one's finished at once, whatever
process ids are in use (the journal's `pid` is not relied on: ids are reused). It also keeps
two sessions of one repository from accepting at the same instant.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tui_engineer.vcs.owner import hold, release

JOURNAL = "tui-engineer-accept.json"
LOCK = "tui-engineer-accept.owner"  # flocked by the process whose accept it is (owner.py)


@dataclass
class Journal:
    ref: str  # refs/heads/<branch>, or HEAD when detached
    old: str | None  # the commit the ref pointed at (None: no commits yet)
    baseline: str  # what the step was proposed against, for the undo ref
    paths: list[str]
    subject: str
    new: str | None = None  # set once the commit exists, just before the ref moves
    message: str = ""  # the commit message before the user's hooks see it
    sign: bool = False  # the user's commit.gpgSign
    # (path, mode, blob sha) of each step path, blobs already in the user's object store; no
    # mode and no sha: the step removes it. Empty in a journal of an older version.
    entries: list[tuple[str, str, str | None]] = field(default_factory=list)
    pid: int = field(default_factory=os.getpid)  # said, not relied on: the lock tells
    host: str = field(default_factory=socket.gethostname)
    # The accept lock's descriptor while this process works on the journal (never written).
    lock: int | None = field(default=None, repr=False, compare=False)


def write_journal(gitdir: Path, journal: Journal) -> None:
    """Whole or absent, and on disk when this returns: the file is fsynced, and so is the
    folder after the rename, which would otherwise be lost with a power cut."""
    temp = gitdir / (JOURNAL + ".tmp")
    with open(temp, "w", encoding="utf-8") as out:
        json.dump({k: v for k, v in asdict(journal).items() if k != "lock"}, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, gitdir / JOURNAL)
    folder = os.open(gitdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def read_journal(gitdir: Path) -> Journal | None:
    try:
        data = json.loads((gitdir / JOURNAL).read_text(encoding="utf-8"))
        data.pop("lock", None)
        return Journal(**data)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):
        return None  # a journal we cannot read is dropped by the caller


def remove_journal(gitdir: Path) -> None:
    (gitdir / JOURNAL).unlink(missing_ok=True)
    (gitdir / (JOURNAL + ".tmp")).unlink(missing_ok=True)


def take_accept_lock(gitdir: Path, wait: float = 0.0) -> int | None:
    """The lock an accepting process holds from its decision until its journal is gone (or
    None: another process holds it longer than `wait` seconds). Whoever can take it knows the
    journal's writer is gone, whatever process ids are in use (owner.py)."""
    return hold(gitdir / LOCK, wait)


def release_accept_lock(journal: Journal) -> None:
    release(journal.lock)
    journal.lock = None


def stale_locks(gitdir: Path, common: Path, ref: str, since: float) -> list[Path]:
    """Lock files of the refs and index an accept touches, made after `since` (the journal).
    `common` is where branches live (the main .git when the user works in a linked worktree)."""
    found = [gitdir / "index.lock", gitdir / "HEAD.lock", common / "packed-refs.lock"]
    found.append((gitdir if ref == "HEAD" else common) / f"{ref}.lock")
    undo = common / "refs" / "tui-engineer"
    found += list(undo.rglob("*.lock")) if undo.is_dir() else []
    return [p for p in found if p.exists() and p.stat().st_mtime >= since - 2]


def journal_time(gitdir: Path) -> float:
    try:
        return (gitdir / JOURNAL).stat().st_mtime
    except FileNotFoundError:
        return time.time()
