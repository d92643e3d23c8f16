"""Accepting a step (bring it into the user's tree, one commit) and undoing the last one.

Accept is atomic, in this order:
1. checks: every file the step touches must still be as the proposal saw it, and no folder on
   the way to one may be a symlink or file in the user's tree (writing would go through it);
2. the decision (`decide`): the step's files go into the user's object store and a journal
   (accept_journal.py) naming them, the message and the old commit is written in `.git`;
3. the commit is built as objects from the user's HEAD tree plus the step's files, in a
   temporary index, with the user's pre-commit / prepare-commit-msg / commit-msg hooks run on
   it (commit_objects.py says what hooks see), identity and signing as `git commit` would;
4. the branch (or a detached HEAD) moves by compare-and-swap from the old commit;
5. only then are the step's files and index entries written (tree_update.py), the journal
   removed, and post-commit run.
A kill before 4 leaves the user's files, index and branch untouched, and the next start makes
the commit from the journal (a decision is never lost: DESIGN.md invariant 8); a kill after 4 is
finished by `recover_interrupted_accept` at the next start. The user's index.lock is never taken.
Other uncommitted changes (staged or not) stay as they were. A file the step edits that also
held uncommitted user changes ("include" mode) is committed whole: the step was written and
tested on top of those changes. On a detached HEAD the commit is made there, like `git commit`
would (callers can tell from `RepoState.branch is None` and say so).

Undo moves HEAD back one commit instead of adding a revert commit: it only ever runs on an
unpushed commit that is HEAD, so no one else has it, and the history stays the clean series of
commits the session is meant to produce. Nothing is lost: it refuses when the user changed the
step's files since, the files get back the exact content they had before the accept (including
uncommitted work that was committed with the step), and the commit stays in the reflog.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import git

from tui_engineer.vcs.accept_journal import (
    Journal,
    journal_time,
    owner_alive,
    read_journal,
    remove_journal,
    stale_locks,
    write_journal,
)
from tui_engineer.vcs.commit_objects import (
    Entry,
    checked_message,
    hash_shadow_file,
    make_commit,
    run_hook,
    stage,
)
from tui_engineer.vcs.plumbing import EMPTY_OLD, git_dir, git_text, rev, run_git
from tui_engineer.vcs.repo import (
    GitRefused,
    RepoState,
    commit_config,
    config_bool,
    git_output,
    literal,
    open_repo,
    read_state,
    refuse_in_progress,
    require_identity,
)
from tui_engineer.vcs.shadow import Change, Shadow
from tui_engineer.vcs.tree_update import write_step

TRAILER_KEY = "Assisted-by"
TRAILER_TOOL = "tui-engineer"
# Points an accepted commit at the content its files had before the accept, for undo.
UNDO_REFS = "refs/tui-engineer/undo/"


def trailer(model: str | None) -> str:
    return f"{TRAILER_KEY}: {TRAILER_TOOL}" + (f" (model: {model})" if model else "")


def compose_message(title: str, body: str, model: str | None) -> str:
    parts = [title.strip(), body.strip(), trailer(model)]
    return "\n\n".join(p for p in parts if p) + "\n"


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


def _refuse_conflicts(conflicts: list[str]) -> None:
    if conflicts:
        raise GitRefused(
            "You changed files this step also changes, since it was proposed:\n  "
            + "\n  ".join(conflicts)
            + "\nNothing was written. Commit or undo your edits there, then reject the "
            "step to have it proposed again on top of them."
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


def _remember_for_undo(repo: git.Repo, sha: str, before: str) -> None:
    old = repo.git.for_each_ref("--format=%(refname)", UNDO_REFS).split()
    for ref in old:
        repo.git.update_ref("-d", ref)
    repo.git.update_ref(UNDO_REFS + sha, before)


def _where(repo: git.Repo, state: RepoState) -> str:
    """The ref a commit moves: the current branch, or HEAD itself when detached."""
    if state.branch is None:
        return "HEAD"
    if not state.branch.startswith("refs/"):  # status names a branch without refs/heads/
        return f"refs/heads/{state.branch}"
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
    with tempfile.TemporaryDirectory(prefix="tui-engineer-accept-") as scratch:
        index = Path(scratch) / "index"
        stage(root, index, journal.old, entries)
        run_hook(root, "pre-commit", index=index)
        message = checked_message(root, gitdir, journal.message, index)
        return make_commit(root, index, journal.old, message, sign=journal.sign)


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
    sha = commit_decided(shadow.root, journal)
    shadow.rebaseline()
    return sha


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
    committed, now or at the next start. Nothing of the user's changes yet."""
    if not title.strip():
        raise ValueError("a commit needs a title")
    if changes is None:
        changes = shadow.changes()
    if not changes:
        raise GitRefused("The step changes nothing, so there is nothing to commit.")
    paths = _touched(changes)
    root = shadow.root
    with open_repo(root) as repo:
        state = read_state(repo)
        refuse_in_progress(state, "commit")
        config = commit_config(repo)
        require_identity(repo, config)
        _refuse_conflicts(_conflicts(repo, root, shadow.baseline, paths))
        _refuse_links_in_the_way(root, paths)
        gitdir = Path(repo.git_dir).resolve()
        ref = _where(repo, state)
    try:
        entries = [hash_shadow_file(root, shadow.path, p) for p in paths]
    except git.GitCommandError as err:
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
    write_journal(gitdir, journal)
    return journal


def commit_decided(root: Path, journal: Journal) -> str:
    """Make the decided step's commit (hooks, compare-and-swap), then write its files; return
    its sha. A refusal (a hook, the branch moved) removes the journal: nothing was written."""
    gitdir = git_dir(root)
    try:
        sha = _build(root, journal, gitdir)
        journal.new = sha
        write_journal(gitdir, journal)
        _move_ref(root, journal, sha)
    except BaseException as err:
        remove_journal(gitdir)  # the branch did not move: nothing of the user's was written
        if isinstance(err, git.GitCommandError):
            raise GitRefused(
                "git refused the commit; your files are as they were before accepting.\n"
                + git_output(err)
            ) from None
        raise
    _finish(root, gitdir, journal, sha)
    run_hook(root, "post-commit")  # like git: after the commit is in place; its status is ignored
    return sha


def _finish(
    root: Path, gitdir: Path, journal: Journal, sha: str, keep: frozenset[str] = frozenset()
) -> None:
    """After the branch moved: files, index entries and the undo ref; then the journal goes.
    Paths in `keep` (edited by the user since a crash) are left as they are."""
    write_step(root, gitdir, sha, [p for p in journal.paths if p not in keep])
    with open_repo(root) as repo:
        _remember_for_undo(repo, sha, journal.baseline)
    remove_journal(gitdir)


def _edited_since(root: Path, journal: Journal, new: str) -> frozenset[str]:
    """Paths that are neither as before the accept nor as committed: the user edited them after
    the crash, so finishing must not overwrite them."""
    with open_repo(root) as repo:
        unlike_before = set(_conflicts(repo, root, journal.baseline, journal.paths))
        unlike_commit = set(_conflicts(repo, root, new, journal.paths))
    return frozenset(unlike_before & unlike_commit)


def recover_interrupted_accept(root: Path) -> str | None:
    """Finish or roll back an accept a crash interrupted (see accept_journal); say which."""
    gitdir = git_dir(root)
    journal = read_journal(gitdir)
    if journal is None:
        remove_journal(gitdir)  # an unreadable or half-written one
        return None
    if owner_alive(journal):
        return None  # another session is accepting right now
    common = Path(git_text(root, "rev-parse", "--path-format=absolute", "--git-common-dir"))
    for lock in stale_locks(gitdir, common, journal.ref, journal_time(gitdir)):
        lock.unlink(missing_ok=True)
    now = rev(root, journal.ref)
    step = f"'{journal.subject}'"
    if journal.new is not None and now == journal.new:
        edited = _edited_since(root, journal, journal.new)
        _finish(root, gitdir, journal, journal.new, edited)
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
        edited = _conflicts(repo, root, journal.baseline, journal.paths)
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
