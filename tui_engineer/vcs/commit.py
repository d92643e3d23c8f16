"""Accepting a step (bring it into the user's tree, one commit) and undoing the last one.

`accept` is the decision (`decide`) and its commit (`commit_decided`), both in
accept_journal.py, which says how an accept stays atomic through a crash.

Undo moves HEAD back one commit instead of adding a revert commit: it only ever runs on an
unpushed commit that is HEAD, so no one else has it, and the history stays the clean series of
commits the session is meant to produce. Nothing is lost: it refuses when the user changed the
step's files since, the files get back the exact content they had before the accept (including
uncommitted work that was committed with the step), and the commit stays in the reflog.
"""

from __future__ import annotations

from pathlib import Path

import git

from tui_engineer.vcs.accept_journal import UNDO_REFS, commit_decided, decide
from tui_engineer.vcs.changes import Change
from tui_engineer.vcs.commit_objects import TRAILER_KEY, TRAILER_TOOL
from tui_engineer.vcs.file_blobs import tree_blobs
from tui_engineer.vcs.journal import Journal
from tui_engineer.vcs.repo import GitRefused, literal, open_repo, read_state, refuse_in_progress
from tui_engineer.vcs.shadow import Shadow


def accept(
    shadow: Shadow,
    *,
    title: str,
    body: str = "",
    model: str | None = None,
    changes: list[Change] | None = None,
) -> str:
    """Bring the shadow's proposal into the user's tree as exactly one commit; return its sha.
    `changes`: the shadow's changes if the caller has just listed them (nothing ran in the
    shadow since), else they are listed here."""
    journal = decide(shadow, title=title, body=body, model=model, changes=changes)
    return commit_accepted(shadow, journal)


def commit_accepted(shadow: Shadow, journal: Journal) -> str:
    """The commit of a decided step (`decide`: its journal is on disk), then the shadow
    rebased on it; its sha."""
    sha = commit_decided(shadow.root, journal)
    shadow.rebaseline()
    return sha


def is_ours(repo: git.Repo, commit: str) -> bool:
    values = repo.git.log(
        "-1", f"--format=%(trailers:key={TRAILER_KEY},valueonly)", commit
    ).splitlines()
    return any(v.strip().split(" ")[0] == TRAILER_TOOL for v in values)


def _refuse_not_ours(repo: git.Repo, head: str) -> None:
    recent = repo.git.rev_list("-n", "50", head).split()
    ours = next((c for c in recent if is_ours(repo, c)), None)
    subject = repo.git.log("-1", "--format=%s", head)
    hint = "No recent commit was made by tui-engineer."
    if ours:
        back = recent.index(ours)
        hint = (
            f"The last tui-engineer commit is {ours[:8]}, {back} commit(s) back; undo only "
            f"takes back the newest commit. To reverse that one, use: git revert {ours[:8]}"
        )
    raise GitRefused(f"HEAD ({head[:8]} '{subject}') was not made by tui-engineer. {hint}")


def _refuse_if_pushed(repo: git.Repo, head: str) -> None:
    remotes = repo.git.for_each_ref(
        "--contains", head, "--format=%(refname:short)", "refs/remotes"
    ).split()
    if remotes:
        raise GitRefused(
            f"The last step ({head[:8]}) was already pushed ({', '.join(remotes)}); undoing it "
            f"would rewrite shared history. To reverse it with a new commit: git revert {head[:8]}"
        )


def _refuse_if_changed(repo: git.Repo, paths: list[str]) -> None:
    out = repo.git.status(
        "--porcelain=v1", "--untracked-files=all", "--", *literal(paths)
    ).splitlines()
    if out:
        raise GitRefused(
            "You changed files from the last step since it was committed:\n  "
            + "\n  ".join(line[3:] for line in out)
            + "\nUndo refused so your edits are not lost. Commit or discard them first."
        )


def _remove_empty_parents(path: Path, root: Path) -> None:
    for folder in path.parents:
        if folder == root or not folder.is_relative_to(root):
            return
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _restore_before(repo: git.Repo, root: Path, source: str | None, paths: list[str]) -> None:
    """Files as they were before the accept: content from `source`, absent if not there."""
    present = sorted(tree_blobs(repo, source, paths))
    if present:
        repo.git.checkout(source, "--", *literal(present))
    for rel in set(paths) - set(present):
        target = root / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
            _remove_empty_parents(target, root)


def undo_last(root: Path) -> str:
    """Take back the last tui-engineer commit if it is HEAD and unpushed; say what was done."""
    with open_repo(root) as repo:
        state = read_state(repo)
        refuse_in_progress(state, "undo")
        head = state.head
        if head is None:
            raise GitRefused("This repository has no commits, so there is nothing to undo.")
        if not is_ours(repo, head):
            _refuse_not_ours(repo, head)
        _refuse_if_pushed(repo, head)
        commits = repo.git.rev_list("--parents", "-n", "1", head).split()
        if len(commits) > 2:
            raise GitRefused(f"HEAD ({head[:8]}) is a merge commit; undo it with git yourself.")
        parent = commits[1] if len(commits) == 2 else None
        paths = repo.git.diff_tree(
            "-r", "--no-commit-id", "--name-only", "-z", "--root", head,
            strip_newline_in_stdout=False,
        ).split("\0")  # fmt: skip
        paths = [p for p in paths if p]
        _refuse_if_changed(repo, paths)
        undo_ref = UNDO_REFS + head
        recorded = repo.git.rev_parse("-q", "--verify", undo_ref, with_exceptions=False).strip()
        subject = repo.git.log("-1", "--format=%s", head)
        return _undo(repo, root, head, parent, paths, recorded or parent, subject)


def _undo(
    repo: git.Repo,
    root: Path,
    head: str,
    parent: str | None,
    paths: list[str],
    before: str | None,
    subject: str,
) -> str:
    note = f"tui-engineer: undo {subject}"
    if parent:  # the old value guards against HEAD moving under us
        repo.git.update_ref("-m", note, "HEAD", parent, head)
    else:
        repo.git.update_ref("-m", note, "-d", "HEAD", head)
    _restore_before(repo, root, before, paths)
    if parent:  # the index entries go back to the parent's: restored content is uncommitted
        repo.git.reset("-q", parent, "--", *literal(paths))
    else:
        repo.git.rm("--cached", "-r", "-q", "--ignore-unmatch", "--", *literal(paths))
    repo.git.update_ref("-d", UNDO_REFS + head, with_exceptions=False)
    where = f"back at {parent[:8]}" if parent else "without commits again"
    return (
        f"Undid '{subject}' ({head[:8]}): HEAD is {where} and its files are as before that "
        f"step. The commit is still in the reflog; bring it back with: git cherry-pick {head[:8]}"
    )
