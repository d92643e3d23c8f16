"""Finishing, at the next start, an accept a crash cut off (accept_journal.py says the order an
accept goes in; journal.py, the journal it leaves): after its commit, its files are written;
before it, the commit is made as decided, or rolled back when the user edited the step's files
since or git refuses it."""

from __future__ import annotations

from pathlib import Path

from tui_engineer.vcs.accept_journal import commit_decided, finish
from tui_engineer.vcs.file_blobs import conflicts
from tui_engineer.vcs.journal import (
    JOURNAL,
    Journal,
    journal_time,
    read_journal,
    release_accept_lock,
    remove_journal,
    stale_locks,
    take_accept_lock,
)
from tui_engineer.vcs.owner import release
from tui_engineer.vcs.plumbing import git_dir, git_text, rev
from tui_engineer.vcs.repo import GitRefused, open_repo


def _edited_since(root: Path, journal: Journal, new: str) -> frozenset[str]:
    """Paths that are neither as before the accept nor as committed: the user edited them after
    the crash, so finishing must not overwrite them."""
    with open_repo(root) as repo:
        unlike_before = set(conflicts(repo, root, journal.baseline, journal.paths))
        unlike_commit = set(conflicts(repo, root, new, journal.paths))
    return frozenset(unlike_before & unlike_commit)


def recover_interrupted_accept(root: Path) -> str | None:
    """Finish or roll back an accept a crash interrupted (see accept_journal); say which."""
    gitdir = git_dir(root)
    if not (gitdir / JOURNAL).exists():
        return None
    lock = take_accept_lock(gitdir)
    if lock is None:
        return None  # another session is accepting right now
    journal = read_journal(gitdir)  # read under the lock: its owner may have just finished
    if journal is None:
        remove_journal(gitdir)  # none, or an unreadable or half-written one
        release(lock)
        return None
    journal.lock = lock
    try:
        return _recover(root, gitdir, journal)
    finally:
        release_accept_lock(journal)


def _recover(root: Path, gitdir: Path, journal: Journal) -> str:
    """Finish or roll back the journal of a session that is gone (its lock is ours now)."""
    common = Path(git_text(root, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    for lock in stale_locks(gitdir, common, journal.ref, journal_time(gitdir)):
        lock.unlink(missing_ok=True)
    now = rev(root, journal.ref)
    step = f"'{journal.subject}'"
    if journal.new is not None and now == journal.new:
        edited = _edited_since(root, journal, journal.new)
        finish(root, gitdir, journal, journal.new, edited)
        kept = f" Kept your edits to {', '.join(sorted(edited))} (see git diff)." if edited else ""
        return (
            f"An accept of {step} was interrupted after its commit ({journal.new[:8]}) was made; "
            f"its files are now written too.{kept}"
        )
    if now == journal.old and journal.entries:
        return _commit_interrupted(root, journal, step)
    remove_journal(gitdir)
    if now == journal.old:
        return (
            f"An accept of {step} was interrupted before its commit was made; rolled back: "
            "your files and branch are as they were before it."
        )
    return f"An accept of {step} was interrupted, and {journal.ref} has moved since; left as it is."


def _commit_interrupted(root: Path, journal: Journal, step: str) -> str:
    """The decision was made, the commit not (a stop during the pre-commit hook, say): make it
    now, unless the user edited the step's files since or git refuses; then roll back."""
    with open_repo(root) as repo:
        edited = conflicts(repo, root, journal.baseline, journal.paths)
    rolled_back = "rolled back: your files and branch are as they were before it"
    if edited:
        remove_journal(git_dir(root))
        return (
            f"An accept of {step} was interrupted before its commit was made, and you edited "
            f"{', '.join(edited)} since; {rolled_back}."
        )
    try:
        sha = commit_decided(root, journal)
    except GitRefused as err:
        return (
            f"An accept of {step} was interrupted before its commit was made; making it now "
            f"failed, so {rolled_back}.\n{err}"
        )
    return (
        f"An accept of {step} was interrupted before its commit was made; it is committed now "
        f"({sha[:8]}), as you decided."
    )
