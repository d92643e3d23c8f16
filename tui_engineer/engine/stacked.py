"""The shadows of a step prepared on top of another's proposal (engine/pipeline.py): the proposal
under review as a commit on no branch, a shadow whose baseline is that commit, and a prepared
proposal moved onto the tree the human accepted."""

from __future__ import annotations

import shutil

from tui_engineer.vcs.identity import INTERNAL_IDENTITY
from tui_engineer.vcs.shadow import Shadow


def _git(shadow: Shadow, *args: str, env: dict[str, str] | None = None) -> str:
    return shadow._git.execute(["git", "-C", str(shadow.path), *args], env=env).strip()


def pending_commit(shadow: Shadow) -> tuple[str, str]:
    """A commit (on no branch) holding the step's files (not what its tests wrote: they are
    not committed unless kept), the base to build the next step on; and its tree id."""
    tree = shadow.step_tree()
    message = "tui-engineer: proposal under review"
    commit = _git(
        shadow, "commit-tree", tree, "-p", shadow.baseline, "--no-gpg-sign", "-m", message,
        env=INTERNAL_IDENTITY,
    )  # fmt: skip
    return commit, tree


def stacked_shadow(
    pending: Shadow, session_id: str, base: str, spare: Shadow | None = None
) -> Shadow:
    """A shadow worktree whose baseline is `base`, a pending commit of `pending`: `spare` (the
    last prepared step's, whose files differ from it in a few places) or a new one (a checkout of
    every file: seconds on a large repository)."""
    ahead = spare or Shadow.create(
        pending.root, session_id=session_id, include_dirty=pending.include_dirty
    )
    # `base` lives in the pending shadow's own object store. Forced: a spare's old base is not
    # an ancestor of the new one.
    _git(pending, "push", "-q", str(ahead.path), f"+{base}:refs/tui-engineer/base")
    ahead.baseline = base
    ahead.reset()
    return ahead


def transplant(source: Shadow, target: Shadow) -> None:
    """Make `target`'s files show `source`'s proposal (their baselines have equal trees), and
    the files its test runs wrote, still told apart."""
    step = source.changes()
    for change in [*step, *source.written_changes()]:
        if change.old_path:
            (target.path / change.old_path).unlink(missing_ok=True)
        dest = target.path / change.path
        if change.status == "D":
            dest.unlink(missing_ok=True)
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source.path / change.path, dest)
    if source.written.tests_ran:
        target.adopt_written({c.path for c in step} | {c.old_path for c in step if c.old_path})
