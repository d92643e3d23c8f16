"""Accepting a step: the decision made durable, the commit, and finishing one a crash cut off.

Accept is atomic, in this order:
1. checks: every file the step touches must still be as the proposal saw it, and no folder on
   the way to one may be a symlink or file in the user's tree (writing would go through it);
2. the decision (`decide`): the step's files go into the user's object store and a journal
   (journal.py) naming them, the message and the old commit is written in `.git`;
3. the commit is built as objects from the user's HEAD tree plus the step's files, in a
   temporary index, with the user's pre-commit / prepare-commit-msg / commit-msg hooks run on
   it (commit_objects.py says what hooks see), identity and signing as `git commit` would;
   with none of those hooks, no index: only the folders the step touched (tree_edit.py);
4. the branch (or a detached HEAD) moves by compare-and-swap from the old commit;
5. only then are the step's files and index entries written (tree_update.py), the journal
   removed, and post-commit run.
A kill before 4 leaves the user's files, index and branch untouched, and the next start makes
the commit from the journal (a decision is never lost: DESIGN.md invariant 8); a kill after 4 is
finished by `recover_interrupted_accept` (accept_recovery.py) at the next start. The user's
index.lock is never taken. Other uncommitted changes (staged or not) stay as they were. A file
the step edits that also held uncommitted user changes ("include" mode) is committed whole: the
step was written and tested on top of those changes. On a detached HEAD the commit is made
there, like `git commit` would (callers can tell from `RepoState.branch is None` and say so).

The journal that makes this so, and what the next start does with it: journal.py.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

import git

from tui_engineer.base.disk import disk_trouble
from tui_engineer.vcs.changes import Change
from tui_engineer.vcs.commit_objects import (
    TRAILER_KEY,
    TRAILER_TOOL,
    Entry,
    checked_message,
    compose_message,
    hash_shadow_file,
    make_commit,
    run_hook,
    stage,
)
from tui_engineer.vcs.file_blobs import conflicts
from tui_engineer.vcs.identity import commit_config, config_bool, require_identity
from tui_engineer.vcs.journal import (
    Journal,
    read_journal,
    release_accept_lock,
    remove_journal,
    take_accept_lock,
    write_journal,
)
from tui_engineer.vcs.merge_in import edits_included
from tui_engineer.vcs.owner import release
from tui_engineer.vcs.plumbing import EMPTY_OLD, git_dir, git_text, run_git
from tui_engineer.vcs.repo import (
    GitRefused,
    git_output,
    head_state,
    open_repo,
    refuse_in_progress,
)
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.tree_edit import TooWide, hooks_see_an_index, tree_with
from tui_engineer.vcs.tree_update import write_step

# Points an accepted commit at the content its files had before the accept, for undo.
UNDO_REFS = "refs/tui-engineer/undo/"


def _touched(changes: list[Change]) -> list[str]:
    paths = [c.path for c in changes] + [c.old_path for c in changes if c.old_path]
    return sorted(set(paths))


def _refuse_conflicts(
    repo: git.Repo, root: Path, head: str, baseline: str, found: list[str]
) -> None:
    """Files of the step that differ from what it was proposed on: the user's edits, or
    commits made on the branch since (another session's, say), each said as what it is."""
    if not found:
        return
    edited = conflicts(repo, root, head, found) if head and head != baseline else found
    committed = [p for p in found if p not in edited]
    if committed:
        raise GitRefused(_committed_since(repo, baseline, head, committed, edited))
    raise GitRefused(
        "You changed files this step also changes, since it was proposed:\n  "
        + "\n  ".join(edited)
        + "\nNothing was written. Commit or undo your edits there, then reject the "
        "step to have it proposed again on top of them."
    )


def _committed_since(
    repo: git.Repo, baseline: str, head: str, committed: list[str], edited: list[str]
) -> str:
    """Commits on the branch, not the user's edits, changed the step's files: say whose."""
    newest = repo.git.log("-1", "--format=%h%x00%s%x00%b", f"{baseline}..{head}", "--", *committed)
    sha, subject, body = (newest.split("\0") + ["", "", ""])[:3]
    by = " by another tui-engineer session" if f"{TRAILER_KEY}: {TRAILER_TOOL}" in body else ""
    said = (
        f"Commits made on this branch since the step was proposed (the newest: {sha} "
        f'"{subject}"{by}) change files this step also changes:\n  ' + "\n  ".join(committed)
    )
    if edited:
        said += "\nand you changed these since:\n  " + "\n  ".join(edited)
    return said + (
        "\nNothing was written: this step was built on the branch as it was before them. "
        "Quit and resume this session (`--resume`): it goes on from the branch as it is now."
    )


def _refuse_links_in_the_way(root: Path, paths: list[str]) -> None:
    """A step path whose folder is a symlink (or a file) in the user's tree that the step does
    not itself replace: writing there would go through the link, possibly outside the repo."""
    replaced = set(paths)
    for rel in paths:
        parts = Path(rel).parts[:-1]
        for depth in range(1, len(parts) + 1):
            folder = Path(*parts[:depth])
            here = root / folder
            if folder.as_posix() in replaced or not (here.is_symlink() or here.exists()):
                continue
            if here.is_symlink() or not here.is_dir():
                what = f"a link to {os.readlink(here)}" if here.is_symlink() else "a file"
                raise GitRefused(
                    f"The step writes {rel}, but {folder.as_posix()} is {what} in your tree "
                    "(not a folder the step changes). Writing there would go through it, so "
                    "nothing was written. Move it aside or reject the step."
                )


_INDEX_LOCK_WAIT = 2.0  # seconds: a git command of the user's that writes the index is quick


def _refuse_locked_index(gitdir: Path) -> None:
    """Refuse, as `git commit` would, while another git process holds the index: the step's
    entries are written to it once the branch moved, and that process's own write would then
    throw them away (the next commit of the user's would take the step back out)."""
    lock = gitdir / "index.lock"
    deadline = time.monotonic() + _INDEX_LOCK_WAIT
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if lock.exists():
        raise GitRefused(
            f"Another git process seems to be running in this repository ({lock} exists). "
            "Wait for it to end; if none is running (one that crashed left the file), remove "
            f"it: rm {lock}"
        )


def _remember_for_undo(repo: git.Repo, sha: str, before: str) -> None:
    old = repo.git.for_each_ref("--format=%(refname)", UNDO_REFS).split()
    for ref in old:
        repo.git.update_ref("-d", ref)
    repo.git.update_ref(UNDO_REFS + sha, before)


def _where(repo: git.Repo) -> str:
    """The ref a commit moves: the current branch, or HEAD itself when detached."""
    branch = repo.git.symbolic_ref("-q", "HEAD", with_exceptions=False).strip()
    return branch or "HEAD"


def _move_ref(root: Path, journal: Journal, new: str) -> None:
    """Compare-and-swap: the ref moves to `new` only if it is still at the old commit."""
    kind = "commit (initial)" if journal.old is None else "commit"
    deref = ["--no-deref"] if journal.ref == "HEAD" else []
    old = journal.old or EMPTY_OLD
    try:
        run_git(
            root, "update-ref", *deref, "-m", f"{kind}: {journal.subject}", journal.ref, new, old
        )
    except git.GitCommandError as err:
        raise GitRefused(
            f"{journal.ref} moved while the step was being committed; nothing was written.\n"
            + git_output(err)
        ) from None


def _build(root: Path, journal: Journal, gitdir: Path) -> str:
    """The step's commit as objects (hooks run on a temporary index); returns its sha."""
    entries = [Entry(path, mode, sha) for path, mode, sha in journal.entries]
    if not hooks_see_an_index(root):  # no index to make: the tree folder by folder
        with contextlib.suppress(TooWide):
            tree = tree_with(root, journal.old, entries)
            message = checked_message(root, gitdir, journal.message, None)
            return make_commit(root, tree, journal.old, message, sign=journal.sign)
    with tempfile.TemporaryDirectory(prefix="tui-engineer-accept-") as scratch:
        index = Path(scratch) / "index"
        stage(root, index, journal.old, entries)
        run_hook(root, "pre-commit", index=index)
        message = checked_message(root, gitdir, journal.message, index)
        tree = git_text(root, "write-tree", env={"GIT_INDEX_FILE": str(index)})
        return make_commit(root, tree, journal.old, message, sign=journal.sign)


class NoRoomToAccept(GitRefused):
    """A full, over-quota or read-only disk met before the branch moved: nothing was written,
    the step can be accepted again once there is room (a refusal, said with the folder and the
    room needed)."""


_NOTHING_WRITTEN = (
    "Nothing was written to your files or branch; free some space there, then accept again."
)


def _no_room(err: BaseException, where: Path | None = None) -> NoRoomToAccept | None:
    full = disk_trouble(err, where)
    if full is None:
        return None
    said = str(full).split(". Free some space")[0]  # our own way on is said instead
    return NoRoomToAccept(f"{said}. {_NOTHING_WRITTEN}")


def decide(
    shadow: Shadow,
    *,
    title: str,
    body: str = "",
    model: str | None = None,
    changes: list[Change] | None = None,
) -> Journal:
    """The decision, made durable: checks, the step's files into the user's object store, and
    the journal naming them. From here a stop of any kind (kill -9 too) ends with the step
    committed, now or at the next start. Nothing of the user's changes yet. A full disk on
    the way is NoRoomToAccept (git status's index.lock, the objects, the journal)."""
    try:
        return _decide(shadow, title=title, body=body, model=model, changes=changes)
    except GitRefused:
        raise
    except Exception as err:
        if (refused := _no_room(err)) is not None:
            raise refused from None
        raise


def _decide(
    shadow: Shadow,
    *,
    title: str,
    body: str,
    model: str | None,
    changes: list[Change] | None,
) -> Journal:
    if not title.strip():
        raise ValueError("a commit needs a title")
    if changes is None:
        changes = shadow.changes()
    if not changes:
        raise GitRefused("The step changes nothing, so there is nothing to commit.")
    paths = _touched(changes)
    root = shadow.root
    with open_repo(root) as repo:
        # Where HEAD is, not the uncommitted files (a `git status`, 0.05-0.3 s at 40,000
        # files): the step's own files are compared with the user's below.
        state = head_state(repo)
        refuse_in_progress(state, "commit")
        config = commit_config(repo)
        require_identity(repo, config)
        found = conflicts(repo, root, shadow.baseline, paths)
        # The user's edits taken into the step (vcs/merge_in.py) are not overwritten: the
        # step's version holds them.
        kept = [p for p in found if not _taken_in(shadow, p)]
        _refuse_conflicts(repo, root, state.head or "", shadow.baseline, kept)
        _refuse_links_in_the_way(root, paths)
        gitdir = Path(repo.git_dir).resolve()
        _refuse_locked_index(gitdir)
        ref = _where(repo)
    try:
        entries = [hash_shadow_file(root, shadow.path, p) for p in paths]
    except git.GitCommandError as err:
        if (refused := _no_room(err, gitdir)) is not None:  # its object store
            raise refused from None
        raise GitRefused(
            "git refused the step's files; your files are as they were before accepting.\n"
            + git_output(err)
        ) from None
    journal = Journal(
        ref, state.head, shadow.baseline, paths, title.strip().splitlines()[0],
        message=compose_message(title, body, model),
        sign=config_bool(config.get("commit.gpgsign", "false")),
        entries=[(e.path, e.mode, e.sha) for e in entries],
    )  # fmt: skip
    journal.lock = _accept_lock(gitdir)
    try:
        write_journal(gitdir, journal)
    except BaseException:
        release_accept_lock(journal)
        raise
    return journal


_ACCEPT_WAIT = 30.0  # seconds another session's accept (its hooks) may take before refusing


def _accept_lock(gitdir: Path) -> int:
    """The accept lock, held until the journal is gone (journal.py). Refused while another
    session accepts for longer than _ACCEPT_WAIT, or when a journal of a dead session waits
    to be finished (it would be overwritten)."""
    lock = take_accept_lock(gitdir, _ACCEPT_WAIT)
    if lock is None:
        raise GitRefused(
            "Another tui-engineer session is committing in this repository; nothing was "
            "written. Accept again once it is done."
        )
    pending = read_journal(gitdir)
    if pending is not None:
        release(lock)
        raise GitRefused(
            f"An earlier accept of '{pending.subject}' in this repository was interrupted and "
            "is not finished yet; nothing was written. Start tui-engineer again: it finishes "
            "that one first."
        )
    return lock


def _taken_in(shadow: Shadow, path: str) -> bool:
    return path in shadow.taken and edits_included(shadow, path)


def commit_decided(root: Path, journal: Journal) -> str:
    """Make the decided step's commit (hooks, compare-and-swap), then write its files; return
    its sha. A refusal (a hook, the branch moved) removes the journal: nothing was written."""
    gitdir = git_dir(root)
    try:
        try:
            sha = _build(root, journal, gitdir)
            journal.new = sha
            write_journal(gitdir, journal)
            _move_ref(root, journal, sha)
        except BaseException as err:
            remove_journal(gitdir)  # the branch did not move: nothing of the user's was written
            if isinstance(err, Exception) and (refused := _no_room(err)) is not None:
                raise refused from None
            if isinstance(err, git.GitCommandError):
                raise GitRefused(
                    "git refused the commit; your files are as they were before accepting.\n"
                    + git_output(err)
                ) from None
            raise
        finish(root, gitdir, journal, sha)
    finally:
        release_accept_lock(journal)  # the journal is gone, or left to the next start
    with contextlib.suppress(GitRefused):  # like git: after the commit; its status is ignored
        run_hook(root, "post-commit")
    return sha


def finish(
    root: Path, gitdir: Path, journal: Journal, sha: str, keep: frozenset[str] = frozenset()
) -> None:
    """After the branch moved: files, index entries and the undo ref; then the journal goes.
    Paths in `keep` (edited by the user since a crash) are left as they are."""
    write_step(root, gitdir, sha, [p for p in journal.paths if p not in keep])
    with open_repo(root) as repo:
        _remember_for_undo(repo, sha, journal.baseline)
    remove_journal(gitdir)
