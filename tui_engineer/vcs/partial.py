"""Trees of a proposal in its shadow: save the whole proposal as a git tree, build the tree of
only the kept hunks (to test and commit exactly that), and put the whole proposal back.

The whole proposal is kept as a tree object in the shadow's own store, so putting it back is
exact (binary files, modes, renames), whatever was built in the shadow meanwhile.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Protocol

import git

from tui_engineer.base.names import raw
from tui_engineer.base.safe_git import index_lock
from tui_engineer.base.staging import index_kept, stage_all
from tui_engineer.vcs.repo import GitRefused, git_output
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.written import Written


class KeptPlan(Protocol):
    """What a reviewer kept of a proposal, as git needs it to build the kept tree: files taken
    whole, and a patch of the kept hunks for files partly kept. engine/reviews/hunks.py's KeptPlan
    has this shape; said here so git's layer needs no engine type."""

    @property
    def whole(self) -> tuple[tuple[str, str, str | None], ...]: ...  # (status, path, old path)

    @property
    def patch(self) -> str: ...  # for `git apply` on the baseline; "" if no file is partly kept


def _git(shadow: Shadow, *args: str) -> str:
    # `-C`: git itself refuses a folder removed meanwhile (as Shadow.reset does).
    return shadow._git.execute(["git", "-C", str(shadow.path), *args]).strip()


def save_tree(shadow: Shadow) -> str:
    """The git tree id of the shadow's files now (the whole proposal, with any hand edits)."""
    with index_lock(shadow.path):
        stage_all(shadow.path, lambda: _git(shadow, "add", "-A"))
        return index_kept(shadow.path, lambda: _git(shadow, "write-tree"))


def starting_tree(shadow: Shadow) -> str:
    """The tree id the shadow started from: its baseline commit's. Read from the commit, not by
    staging the files (which stats, and on a fresh checkout hashes, every one of them): nothing
    is written in a shadow before its baseline's suite has run."""
    return _git(shadow, "rev-parse", f"{shadow.baseline}^{{tree}}")


def staged_tree(shadow: Shadow) -> str:
    """The git tree id of the shadow's index: the files as last staged (listing the changes
    stages them all), not as they are now. After a hand edit, the proposal as it was."""
    with index_lock(shadow.path):
        return index_kept(shadow.path, lambda: _git(shadow, "write-tree"))


def restore_tree(shadow: Shadow, tree: str, written: Written | None = None) -> None:
    """The shadow's files exactly as `tree` (saved by `save_tree`); ignored files stay.
    `written`: who wrote what in that tree (the shadow's record when it was saved)."""
    with index_lock(shadow.path):  # a map's listing stages the shadow too (context/)
        # Files only in the working tree must be known to be removed.
        stage_all(shadow.path, lambda: _git(shadow, "add", "-A"))
        _git(shadow, "read-tree", "-u", "--reset", tree)
        _git(shadow, "clean", "-fdq")
    if written is not None:
        shadow.written = written


def build_kept(shadow: Shadow, full_tree: str, plan: KeptPlan) -> None:
    """The shadow's files become the baseline plus only the kept units: files kept whole come
    from `full_tree`, partly kept ones get their kept hunks applied. On a refusal the whole
    proposal is put back and GitRefused says why."""
    taken = set(shadow.taken)  # the user's edits taken in stay known (vcs/merge_in.py)
    written = shadow.written.copy()  # what the tests wrote there, for a refusal below
    shadow.reset()
    shadow.taken |= taken
    try:
        with index_lock(shadow.path):  # git rm and checkout write the index: no staging beside
            for status, path, old in plan.whole:
                if old is not None:
                    _git(shadow, "rm", "-q", "--", old)
                if status == "D":
                    _git(shadow, "rm", "-q", "--", path)
                else:
                    _git(shadow, "checkout", full_tree, "--", path)
            if plan.patch:
                _apply(shadow, plan.patch)
    except git.GitCommandError as err:
        restore_tree(shadow, full_tree, written)
        raise GitRefused(
            f"The kept hunks could not be put together: {git_output(err)}\n"
            "The whole proposal is back under review."
        ) from None


def _apply(shadow: Shadow, patch: str) -> None:
    # Outside the shadow's files (the tests must not see it), inside its own .git.
    with tempfile.NamedTemporaryFile(
        dir=Path(shadow.path) / ".git", prefix="kept-", suffix=".patch"
    ) as file:
        file.write(raw(patch))
        file.flush()
        _git(shadow, "apply", "--whitespace=nowarn", file.name)
