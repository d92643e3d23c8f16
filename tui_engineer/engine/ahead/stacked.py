"""The shadows of a step prepared on top of another's proposal (engine/ahead/pipeline.py): the
proposal
under review as a commit on no branch, a shadow whose baseline is that commit, and a prepared
proposal moved onto the tree the human accepted, and one rebased onto a base that changed since
(a fix, a hand edit, hunks left out, another step accepted first)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from tui_engineer.base.safe_git import index_lock, shadow_git_full_env
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
    last prepared step's, whose files differ from it in a few places) or a new one, made from
    one of the repository's spares (vcs/spare.py: the session keeps one for each step prepared
    side by side), else a checkout of every file (seconds on a large repository)."""
    ahead = spare or Shadow.create(
        pending.root, session_id=session_id, include_dirty=pending.include_dirty,
        spares=pending.spares,
    )  # fmt: skip
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


def restack(ahead: Shadow, old_base: str, new_base: str, source: Shadow | None = None) -> bool:
    """Move the proposal in `ahead` (made on `old_base`) onto `new_base`: a three-way merge of
    its own changes onto the new tree, which becomes its baseline. False on a conflict (the
    shadow is left as it was). `source`: the shadow whose object store holds `new_base` (a
    pending commit), when it is not a commit of the repository."""
    if source is not None:
        _git(source, "push", "-q", str(ahead.path), f"+{new_base}:refs/tui-engineer/base")
    tip = _git(
        ahead, "commit-tree", ahead.step_tree(), "-p", old_base, "--no-gpg-sign", "-m",
        "tui-engineer: prepared proposal", env=INTERNAL_IDENTITY,
    )  # fmt: skip
    tree = merged_tree(ahead, old_base, new_base, tip)
    if tree is None:
        return False
    ahead.baseline = new_base
    ahead.reset()
    with index_lock(ahead.path):
        _git(ahead, "read-tree", "-u", "--reset", tree)
    return True


def merged_tree(ahead: Shadow, old_base: str, new_base: str, tip: str) -> str | None:
    """The tree of `tip`'s changes since `old_base` merged onto `new_base`; None on a
    conflict. A three-way `git merge-tree`, where git has `--merge-base` (2.40 and later)."""
    merged = subprocess.run(
        ["git", "-C", str(ahead.path), "merge-tree", "--write-tree", "--no-messages",
         f"--merge-base={old_base}", new_base, tip],
        env=shadow_git_full_env(), capture_output=True, text=True,
    )  # fmt: skip
    if merged.returncode == 0:
        return merged.stdout.split("\n", 1)[0].strip()
    if merged.returncode == 1:  # a conflict
        return None
    return applied_tree(ahead, old_base, new_base, tip)  # an older git: no such option


def applied_tree(ahead: Shadow, old_base: str, new_base: str, tip: str) -> str | None:
    """Where git is older than 2.40 (Debian 12 has 2.39, Ubuntu 22.04 2.34): the step's own
    diff applied to `new_base`'s tree in an index of its own (`git apply --cached`): a hunk
    whose lines moved applies by its context, one whose lines changed does not (None)."""
    with tempfile.TemporaryDirectory(prefix="tui-engineer-restack-") as folder:
        env = {**shadow_git_full_env(), "GIT_INDEX_FILE": str(Path(folder) / "index")}
        git = ["git", "-C", str(ahead.path)]
        subprocess.run([*git, "read-tree", new_base], env=env, check=True, capture_output=True)
        diff = subprocess.run(
            [*git, "diff", "--binary", "--full-index", "--no-renames", old_base, tip],
            env=env, check=True, capture_output=True,
        ).stdout  # fmt: skip
        if diff.strip():
            applied = subprocess.run(
                [*git, "apply", "--cached", "--binary"], input=diff, env=env, capture_output=True
            )
            if applied.returncode != 0:
                return None
        written = subprocess.run([*git, "write-tree"], env=env, check=True, capture_output=True)
        return written.stdout.decode().strip()


def base_tree(shadow: Shadow) -> str:
    """The tree of `shadow`'s baseline: what a step taken into it lands on."""
    return _git(shadow, "rev-parse", f"{shadow.baseline}^{{tree}}")
