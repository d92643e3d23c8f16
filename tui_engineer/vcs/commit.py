"""Accepting a step (bring it into the user's tree, one commit) and undoing the last one.

Accept copies the step's files from the shadow worktree into the user's tree and runs a plain
`git commit --only -- <those files>`: the user's identity, hooks and signing apply as-is, and any
other uncommitted changes (staged or not) stay exactly as they were. A file the step edits that
also held uncommitted user changes ("include" mode) is committed whole: the step was written and
tested on top of those changes. Before writing, every file the step touches must still be as the
proposal saw it; otherwise nothing is written. On a detached HEAD the commit is made there, like
`git commit` would (callers can tell from `RepoState.branch is None` and say so).

Undo moves HEAD back one commit instead of adding a revert commit: it only ever runs on an
unpushed commit that is HEAD, so no one else has it, and the history stays the clean series of
commits the session is meant to produce. Nothing is lost: it refuses when the user changed the
step's files since, the files get back the exact content they had before the accept (including
uncommitted work that was committed with the step), and the commit stays in the reflog.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import git

from tui_engineer.vcs.repo import (
    GitRefused,
    git_output,
    head_sha,
    index_guard,
    literal,
    open_repo,
    read_state,
    refuse_in_progress,
    require_identity,
)
from tui_engineer.vcs.shadow import Change, Shadow

TRAILER_KEY = "Assisted-by"
TRAILER_TOOL = "tui-engineer"
# Points an accepted commit at the content its files had before the accept, for undo.
UNDO_REFS = "refs/tui-engineer/undo/"


def trailer(model: str | None) -> str:
    return f"{TRAILER_KEY}: {TRAILER_TOOL}" + (f" (model: {model})" if model else "")


def compose_message(title: str, body: str, model: str | None) -> str:
    parts = [title.strip(), body.strip(), trailer(model)]
    return "\n\n".join(p for p in parts if p) + "\n"


@dataclass
class _Saved:
    data: bytes | None  # None: the path did not exist
    mode: int = 0o644
    link: str | None = None  # symlink target


class _FileBackup:
    """The user's files before we write, to put back if anything fails."""

    def __init__(self, root: Path, paths: list[str]) -> None:
        self.root = root
        self.saved = {p: self._read(root / p) for p in paths}
        self.missing_dirs = {d for p in paths for d in self._missing_parents(root / p)}

    @staticmethod
    def _read(path: Path) -> _Saved:
        if path.is_symlink():
            return _Saved(None, link=os.readlink(path))
        if path.is_file():
            return _Saved(path.read_bytes(), path.stat().st_mode & 0o777)
        return _Saved(None)

    def _missing_parents(self, path: Path) -> list[Path]:
        return [d for d in path.parents if d.is_relative_to(self.root) and not d.exists()]

    def restore(self) -> None:
        for rel, saved in self.saved.items():
            target = self.root / rel
            if target.is_symlink() or target.is_file():
                target.unlink()
            if saved.link is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(saved.link)
            elif saved.data is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(saved.data)
                target.chmod(saved.mode)
        for folder in sorted(self.missing_dirs, key=lambda d: len(d.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()


def _touched(changes: list[Change]) -> list[str]:
    paths = [c.path for c in changes] + [c.old_path for c in changes if c.old_path]
    return sorted(set(paths))


def _tree_blobs(repo: git.Repo, commit: str | None, paths: list[str]) -> dict[str, str]:
    """path -> blob sha in `commit` (symlinks too), for the given paths that exist there."""
    if commit is None or not paths:
        return {}
    out = repo.git.ls_tree("-r", "-z", commit, "--", *paths, strip_newline_in_stdout=False)
    blobs: dict[str, str] = {}
    for entry in filter(None, out.split("\0")):
        meta, path = entry.split("\t", 1)
        blobs[path] = meta.split()[2]
    return blobs


def _work_blobs(repo: git.Repo, root: Path, paths: list[str]) -> dict[str, str]:
    """path -> the blob sha the user's current file would have (after git's clean filters)."""
    files = [p for p in paths if (root / p).is_file() and not (root / p).is_symlink()]
    shas = repo.git.hash_object("--", *files).split() if files else []
    blobs = dict(zip(files, shas, strict=True))
    for p in paths:
        if (root / p).is_symlink():
            blobs[p] = f"link:{os.readlink(root / p)}"
    return blobs


def _conflicts(repo: git.Repo, root: Path, baseline: str, paths: list[str]) -> list[str]:
    expected = _tree_blobs(repo, baseline, paths)
    for p, sha in list(expected.items()):
        if (root / p).is_symlink():  # compare symlinks by their target text
            expected[p] = f"link:{repo.git.cat_file('blob', sha)}"
    actual = _work_blobs(repo, root, paths)
    return [p for p in paths if expected.get(p) != actual.get(p)]


def _remove_empty_parents(path: Path, root: Path) -> None:
    for folder in path.parents:
        if folder == root or not folder.is_relative_to(root):
            return
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()


def _bring_over(shadow: Shadow, paths: list[str]) -> None:
    """Make each path in the user's tree exactly what it is in the shadow (or absent)."""
    for rel in paths:
        source, target = shadow.path / rel, shadow.root / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
        if source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            target.chmod(source.stat().st_mode & 0o777)
        else:
            _remove_empty_parents(target, shadow.root)


def _commit(repo: git.Repo, root: Path, paths: list[str], message: str) -> None:
    tracked = set(filter(None, repo.git.ls_files("-z", "--", *literal(paths)).split("\0")))
    present = [p for p in paths if (root / p).exists() or (root / p).is_symlink()]
    to_commit = sorted(tracked | set(present))
    if not to_commit:
        raise GitRefused("The step only changes files git does not track; nothing to commit.")
    new = [p for p in to_commit if p not in tracked]
    if new:  # `commit --only` needs git to know a path; -f: the shadow did not ignore it
        repo.git.add("-f", "--", *literal(new))
    repo.git.commit("--only", "-q", "-m", message, "--", *literal(to_commit))


def _remember_for_undo(repo: git.Repo, sha: str, before: str) -> None:
    old = repo.git.for_each_ref("--format=%(refname)", UNDO_REFS).split()
    for ref in old:
        repo.git.update_ref("-d", ref)
    repo.git.update_ref(UNDO_REFS + sha, before)


def accept(shadow: Shadow, *, title: str, body: str = "", model: str | None = None) -> str:
    """Bring the shadow's proposal into the user's tree as exactly one commit; return its sha."""
    if not title.strip():
        raise ValueError("a commit needs a title")
    changes = shadow.changes()
    if not changes:
        raise GitRefused("The step changes nothing, so there is nothing to commit.")
    paths = _touched(changes)
    root = shadow.root
    with open_repo(root) as repo:
        refuse_in_progress(read_state(repo), "commit")
        require_identity(repo)
        conflicts = _conflicts(repo, root, shadow.baseline, paths)
        if conflicts:
            raise GitRefused(
                "You changed files this step also changes, since it was proposed:\n  "
                + "\n  ".join(conflicts)
                + "\nNothing was written. Commit or undo your edits there, then reject the "
                "step to have it proposed again on top of them."
            )
        backup = _FileBackup(root, paths)
        try:
            with index_guard(repo):
                _bring_over(shadow, paths)
                _commit(repo, root, paths, compose_message(title, body, model))
        except BaseException as err:
            backup.restore()
            if isinstance(err, git.GitCommandError):
                raise GitRefused(
                    "git refused the commit; your files are as they were before accepting.\n"
                    + git_output(err)
                ) from None
            raise
        sha = head_sha(repo) or ""
        _remember_for_undo(repo, sha, shadow.baseline)
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


def _restore_before(repo: git.Repo, root: Path, source: str | None, paths: list[str]) -> None:
    """Files as they were before the accept: content from `source`, absent if not there."""
    present = sorted(_tree_blobs(repo, source, paths))
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
