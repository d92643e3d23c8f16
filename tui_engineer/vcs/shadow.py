"""The shadow: where a session's proposals are written and tested, away from the user.

Location: `<user cache>/tui-engineer/worktrees/<repo>-<hash>/<session_id>`, outside the user's
repository on purpose. Tools search *upward* for their configuration (pytest's rootdir and
conftest.py files, ruff, mypy, node_modules, .env loaders); a shadow nested inside the user's
repo (e.g. under .git/) would pick up the user's untracked files from there. Outside, it behaves
like a fresh clone. A removed shadow's checkout is kept as one of the repository's spares, and
the next shadow is made from one by rewriting only what differs (vcs/spare.py).

The shadow is a repository of its own (`git init`, no hooks) that reads the user's objects
through git's alternates, read-only: it never shares the user's refs, config, hooks or index, so
a test running `git branch -D`, `git config` or `git update-ref` in it changes only the shadow.
Its `.git/tui-engineer-session` file holds a reason naming the session, process and start time,
which is how cleanup recognises ours. Beside it, `<session_id>.owner` is flocked by the session's
process before the folder is made and until it is removed (vcs/owner.py): cleanup tells a live
session's shadow from a dead one's by that lock, at once, whatever process ids are in use.

The shadow has a detached HEAD at the *baseline*: the user's HEAD, or a commit on no branch
holding HEAD plus the user's uncommitted changes ("include" mode), or a parentless commit in a
repository with no commits yet. A proposal is the difference between the files and the baseline,
less what its test runs wrote (vcs/written.py): those files are listed apart.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import git

from tui_engineer.base.disk import no_room, remove_tree
from tui_engineer.base.safe_git import index_lock, shadow_git_env, shadow_git_full_env
from tui_engineer.base.staging import forget, index_kept, index_stamp, stage_all, staged_now
from tui_engineer.vcs import spare, spare_clone
from tui_engineer.vcs.changes import Change, parse_name_status, split_raw_patch
from tui_engineer.vcs.dirty import snapshot_commit
from tui_engineer.vcs.owner import hold, release
from tui_engineer.vcs.repo import (
    GitRefused,
    git_output,
    head_state,
    literal,
    open_repo,
    read_state,
    refuse_in_progress,
)
from tui_engineer.vcs.shadow_place import init_shadow_repo, lock_reason, owner_file, shadow_home
from tui_engineer.vcs.submodules import check_out_submodules
from tui_engineer.vcs.tree_update import checkout_size
from tui_engineer.vcs.written import Written

_SHADOW_GIT = 64 * 1024  # a shadow's own .git (index, config, refs): 60 KB measured
_NO_ROOM_FOR_SHADOW = (
    "Could not create the shadow worktree (where the model's edits are tried)",
    "Nothing of yours was changed. Free some space there, then start tui-engineer again.",
)
_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass
class Shadow:
    path: Path
    root: Path
    session_id: str
    baseline: str  # the commit proposals are measured against
    include_dirty: bool = False
    # Submodules with no local copy to check out (the user never initialised them): empty here.
    empty_submodules: tuple[str, ...] = ()
    # Paths whose edits in the user's tree were taken into the proposal (vcs/merge_in.py).
    taken: set[str] = field(default_factory=set)
    owner: int | None = field(default=None, repr=False, compare=False)  # the held owner lock
    # Which changes the test runs wrote, not the step's authors (vcs/written.py).
    written: Written = field(default_factory=Written)
    spares: int = field(default=spare.DEFAULT_POOL, repr=False, compare=False)  # pool kept
    from_spare: bool = field(default=False, repr=False, compare=False)  # not a full checkout
    # (tree, tree) -> the paths that differ between them (`_between`).
    tree_diffs: dict[tuple[str, str], frozenset[str]] = field(
        default_factory=dict, repr=False, compare=False
    )
    # ((baseline, pathspecs, index stamp), (changes, diff)): the last `_proposal`.
    proposal_seen: tuple[tuple[object, ...], tuple[list[Change], str]] | None = field(
        default=None, repr=False, compare=False
    )

    @classmethod
    def create(
        cls, root: Path, *, session_id: str, include_dirty: bool = False,
        spares: int = spare.DEFAULT_POOL,
    ) -> Shadow:  # fmt: skip
        """Make the shadow repository at the baseline (see the module docstring); `spares`:
        how many spares its repository keeps (the session's shadow and its steps side by side)."""
        if not _SESSION_ID.match(session_id):
            raise ValueError(f"session id {session_id!r} must be letters, digits, '.', '_', '-'")
        root = Path(root).resolve()
        with open_repo(root) as repo:
            # Uncommitted paths matter only when they are brought along.
            state = read_state(repo) if include_dirty else head_state(repo)
            refuse_in_progress(state, "start a session")
            baseline = snapshot_commit(repo, include_dirty=include_dirty, state=state)
            path = shadow_home(repo) / session_id
            objects = Path(repo.common_dir).resolve() / "objects"
        if path.exists():
            raise GitRefused(f"A shadow worktree for session {session_id} already exists.")
        path.parent.mkdir(parents=True, exist_ok=True)
        owner = hold(owner_file(path))  # before the folder: no moment it is there unowned
        if owner is None:
            raise GitRefused(f"A live process already holds session {session_id}'s shadow.")
        shadow = cls(path, root, session_id, baseline, include_dirty, owner=owner, spares=spares)
        reason = lock_reason(session_id)
        try:
            # A removed shadow's files, where git rewrites only what differs (vcs/spare.py);
            # else, where files can share blocks, a live sibling's (vcs/spare_clone.py).
            taken = spare.take(path)
            cloned = not taken and spare_clone.clone_sibling(path)
            reused = (taken or cloned) and shadow._fill(objects, reason, reused=True, copied=cloned)
            if not reused:
                spare.clear(path)
                shadow._fill(objects, reason, reused=False)
            shadow.from_spare = reused
        except git.GitCommandError as err:
            remove_tree(path)
            release(owner, owner_file(path))
            needed = checkout_size(root, baseline) + _SHADOW_GIT
            full = no_room(path.parent, needed, *_NO_ROOM_FOR_SHADOW)
            if full is not None:  # git says only 'Could not reset index file'
                raise full from None
            message = f"Could not create the shadow worktree:\n{git_output(err)}"
            raise GitRefused(message) from None
        shadow.empty_submodules = tuple(check_out_submodules(path, baseline, root, objects.parent))
        staged_now(path)  # reset and clean just left the files and index as the baseline
        return shadow

    def _fill(self, objects: Path, reason: str, *, reused: bool, copied: bool = False) -> bool:
        """A repository of its own at the baseline, its files filled in (detached HEAD; no
        hooks to run). `reused`: from a spare's files, whose leftovers go (False when git could
        not use it; the caller starts again from an empty folder); `copied`: files cloned, their
        index another folder's (vcs/spare_clone.py)."""
        try:
            init_shadow_repo(self.path, objects, reason)
            self._git.update_ref("--no-deref", "HEAD", self.baseline)
            if copied:
                spare_clone.refresh_copied_index(self._git)
            self._git.reset("-q", "--hard", self.baseline)
            if reused:  # what the last shadow's steps and test runs wrote, ignored files too
                self._git.clean("-ffdxq")
        except git.GitCommandError:
            if reused:
                return False
            raise
        return True

    def import_commit(self, source: Shadow, commit: str) -> None:
        """Copy `commit` (made in `source`'s own object store) into this shadow's store."""
        source._git.push("-q", str(self.path), f"{commit}:refs/tui-engineer/base")

    @property
    def _git(self) -> git.Git:
        # GitPython runs a command whose folder is missing in this process's own folder (the
        # user's repository): a reset racing `remove` would `git clean` the user's files there.
        if not self.path.is_dir():
            raise GitRefused(f"The shadow worktree {self.path} is gone.")
        runner = git.Git(self.path)
        runner.update_environment(**shadow_git_env())  # never what a test planted in its config
        return runner

    def _stage_all(self, fresh: bool = False) -> None:
        # The shadow's index is private to it: staging everything is how new files, deletes and
        # renames show up in one `git diff --cached` against the baseline. Skipped when nothing
        # wrote here since the last staging (base/staging.py), unless `fresh`.
        stage_all(self.path, lambda: self._git.add("-A"), fresh=fresh)

    def reset(self) -> None:
        """Discard the current proposal: files back to the baseline, new files removed.

        Ignored files (caches, virtualenvs made by test runs) are kept: they are not proposals.
        """
        self._forget_proposal()
        # `-C`: git itself refuses a folder removed after the check in `_git`.
        with index_lock(self.path):
            self._git.execute(["git", "-C", str(self.path), "reset", "-q", "--hard", self.baseline])
            self._git.execute(["git", "-C", str(self.path), "clean", "-fdq"])

    def _tree_now(self, fresh: bool = False) -> str:
        """The tree id of every file now (the caller holds the index lock); `fresh`: staged
        whatever the watch heard."""
        self._stage_all(fresh)
        return index_kept(self.path, self._git.write_tree)

    def _between(self, old: str, new: str) -> frozenset[str]:
        # Two trees' difference never changes: asked again for a step's listing, its tree and
        # its commit (0.02 s each at 40,000 files), git answers once.
        if (old, new) not in self.tree_diffs:
            out = self._git.diff_tree(
                "-r", "--name-only", "-z", "--no-renames", old, new, strip_newline_in_stdout=False
            )
            self.tree_diffs[old, new] = frozenset(path for path in out.split("\0") if path)
        return self.tree_diffs[old, new]

    def _count_authors(self) -> str:
        """What changed since writes were last attributed is an author's; returns the tree."""
        now = self._tree_now()
        since = self.written.counted or self.baseline
        if now != since:
            self.written.authored |= self._between(since, now)
        self.written.counted = now
        return now

    def tests_starting(self) -> None:
        """A test run starts here: every change made since the last one is its authors'."""
        with index_lock(self.path):
            self._count_authors()

    def tests_ended(self, fresh: bool = True) -> None:
        """A test run ended: what it changed is not counted as anyone's edit. `fresh`: staged
        even if nothing was heard, as a process the run left holding a memory map of a file may
        have written through it unheard (base/staging.py); not where none is left."""
        if not self.path.is_dir():
            return  # removed meanwhile (a step prepared ahead, dropped): nothing to attribute
        with index_lock(self.path):
            self.written.counted = self._tree_now(fresh=fresh)
            self.written.tests_ran = True

    def _by_tests(self) -> list[str]:
        """The changed paths only test runs wrote; stages every file (the caller holds the
        index lock)."""
        if not self.written.tests_ran:
            self._stage_all()
            return []
        tree = self._count_authors()
        changed = self._between(self.baseline, tree)
        return sorted(self.written.by_tests(changed))

    def _step_only(self, wrote: list[str] | None = None) -> list[str]:
        """Pathspecs leaving out what the tests wrote (none: the whole tree); `wrote`: those
        files, when the caller has just listed them (else they are, which stages the files)."""
        wrote = self._by_tests() if wrote is None else wrote
        return ["--", *(f":(exclude,literal){path}" for path in wrote)] if wrote else []

    def _diff(self, *args: str) -> str:
        # quotePath off: a name that is not UTF-8 comes as its bytes (read back exactly,
        # see names.py), not as git's octal escapes ("caf\\351.txt").
        return self._git(c="core.quotePath=false").diff(
            "--cached", "--no-color", "--no-ext-diff", self.baseline, *args,
            strip_newline_in_stdout=False,
        )  # fmt: skip

    def diff(self) -> str:
        """Unified diff of the proposal against the baseline (new, deleted, renamed files too),
        without the files its test runs wrote (`written_diff`)."""
        with index_lock(self.path):  # the baseline may be staging this shadow meanwhile
            return self._proposal()[1]

    def changes(self) -> list[Change]:
        """The proposal's changes, with rename sources (not what its test runs wrote)."""
        with index_lock(self.path):
            return list(self._proposal()[0])

    def _proposal(self, wrote: list[str] | None = None) -> tuple[list[Change], str]:
        """The proposal's changes and diff, from one `git diff` (the caller holds the index
        lock; `wrote` as for `_step_only`). An edit's diff and then its changed files were two,
        each reading the whole index (0.07 s apiece at 200,000 files): git is asked again only
        once the index is another (a staging, a reset) or what is left out (the test runs'
        files) changed."""
        spec = self._step_only(wrote)  # stages what was written: the index is then the files'
        key = (self.baseline, tuple(spec), index_stamp(self.path))
        if self.proposal_seen is not None and self.proposal_seen[0] == key:
            return self.proposal_seen[1]
        seen = split_raw_patch(self._diff("-M", "--raw", "-z", "-p", *spec))
        self.proposal_seen = (key, seen)
        return seen

    def changed_files(self) -> list[tuple[str, str]]:
        """(status letter A/M/D/R, path) per changed file; a rename gives its new path."""
        return [(c.status, c.path) for c in self.changes()]

    def written_changes(self) -> list[Change]:
        """The files the test runs created, changed or deleted, and no author touched."""
        with index_lock(self.path):
            wrote = self._by_tests()
            if not wrote:
                return []
            out = self._diff("--no-renames", "--name-status", "-z", "--", *literal(wrote))
            return parse_name_status(out)

    def listing(self) -> tuple[list[Change], list[Change], str]:
        """`changes`, `written_changes` and `written_diff` from one staging of the files (each
        apart stages them again: 0.06-0.3 s at 40,000 files): what a review shows."""
        with index_lock(self.path):
            wrote = self._by_tests()
            step = list(self._proposal(wrote)[0])
            if not wrote:
                return step, [], ""
            paths = literal(wrote)
            written = self._diff("--no-renames", "--name-status", "-z", "--", *paths)
            diff = self._diff("--no-renames", "--", *paths)
            return step, parse_name_status(written), diff

    def written_diff(self) -> str:
        """The diff of what the test runs wrote (shown apart from the proposal's)."""
        with index_lock(self.path):
            wrote = self._by_tests()
            return self._diff("--no-renames", "--", *literal(wrote)) if wrote else ""

    def step_tree(self) -> str:
        """The tree id of the step's files: the shadow's, less what its test runs wrote (which
        is as it is in the baseline there)."""
        with index_lock(self.path):
            wrote = self._by_tests()
            tree = index_kept(self.path, self._git.write_tree)
            if not wrote:
                return tree
            return self._without(tree, wrote)

    def _without(self, tree: str, wrote: list[str]) -> str:
        """`tree` with each of `wrote` as the baseline has it (or not there), built in an
        index of its own from entries only (no file is read: quick on any size of tree)."""
        run = self._run_git
        listed = run("ls-tree", "-z", self.baseline, "--", *literal(wrote)).stdout
        entries = {line.split(b"\t", 1)[1]: line for line in listed.split(b"\0") if line}
        gone = b"0 " + b"0" * len(self.baseline) + b"\t"
        names = [os.fsencode(path) for path in wrote]
        info = b"".join(entries.get(name, gone + name) + b"\0" for name in names)
        with tempfile.TemporaryDirectory(dir=self.path / ".git", prefix="step-") as scratch:
            index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
            run("read-tree", tree, env=index)
            run("update-index", "-z", "--index-info", env=index, input=info)
            return run("write-tree", env=index).stdout.decode().strip()

    def _run_git(
        self, *args: str, env: dict[str, str] | None = None, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """git in the shadow, its output as bytes (names exactly as they are)."""
        return subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=input,
            env={**shadow_git_full_env(), **(env or {})},
            capture_output=True,
            check=True,
        )

    def adopt_written(self, authored: set[str]) -> None:
        """The files now are a proposal whose authors wrote `authored` and whose test runs
        wrote the rest (a proposal moved here from the shadow it was made in)."""
        with index_lock(self.path):
            self.written = Written(set(authored), self._tree_now(), tests_ran=True)

    def rebaseline(self) -> None:
        """Start over from the user's current HEAD (plus uncommitted changes in include mode).

        Called after an accept so the next step builds on the new commit; the worktree is clean.
        """
        with open_repo(self.root) as repo:
            self.baseline = snapshot_commit(repo, include_dirty=self.include_dirty)
        if self._moved_onto(self.baseline):
            self._forget_proposal()
        else:
            self.reset()

    def _forget_proposal(self) -> None:
        self.taken.clear()  # the proposal that held the user's edits is gone
        self.written = Written()

    def _moved_onto(self, commit: str) -> bool:
        """Whether the files (staged, nothing heard since) are `commit`'s already, as after an
        accept of the whole proposal: then only HEAD moves there (`reset --soft`), not a reset
        and a clean reading every file (0.1 s at 40,000 files)."""
        with index_lock(self.path):
            if self._tree_now() != self._git.rev_parse(f"{commit}^{{tree}}"):
                return False
            self._git.execute(["git", "-C", str(self.path), "reset", "-q", "--soft", commit])
            return True

    def apply(self, diff: str) -> bool:
        """Apply `diff` (a proposal as `diff()` gave it) to the files; False when it does not
        apply, the files left as they were."""
        done = subprocess.run(
            ["git", "-C", str(self.path), "apply", "--whitespace=nowarn", "-"],
            input=diff.encode("utf-8", "surrogateescape"),
            env=shadow_git_full_env(),
            capture_output=True,
        )
        return done.returncode == 0

    def remove(self) -> None:
        """Delete the shadow repository (kept as a spare while the pool has room: one rename),
        then its owner lock. Safe to call more than once. Not while a thread still stages its
        files: a step prepared ahead that was cancelled in `git add -A` leaves that thread running
        (a thread cannot be cancelled), and its git would go on writing in a spare that the next
        shadow has taken."""
        with index_lock(self.path):
            forget(self.path)
            if not spare.park(self.path, self.spares):
                remove_tree(self.path)
        release(self.owner, owner_file(self.path))
        self.owner = None
