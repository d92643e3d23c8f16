"""What git lists of a worktree (its top: every path is relative to it): the files' names, and
the blob ids git vouches for (a file whose bytes are as a commit holds them need not be read to
be known)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tui_engineer.base.names import exact
from tui_engineer.base.safe_git import index_lock, is_shadow, shadow_git_full_env
from tui_engineer.base.staging import stage_all


def repo_file_names(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files, as git names them (gitignore honoured);
    files deleted from the tree may still be named."""
    done = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=False,
        env=shadow_git_full_env(),  # root is often a shadow
    )
    return sorted({n for n in exact(done.stdout).split("\0") if n})  # names byte for byte


def _git_lines(root: Path, *args: str) -> Iterator[str]:
    """The NUL-ended entries git prints, one at a time (at 40,000 files a list of them held
    ~5 MiB more while a build went through them)."""
    done = subprocess.run(
        ["git", *args, "-z"], cwd=root, capture_output=True, check=False,
        env=shadow_git_full_env(),
    )  # fmt: skip
    text = exact(done.stdout) if done.returncode == 0 else ""
    del done  # its bytes, once decoded
    return (entry.group() for entry in _ENTRY.finditer(text))


_ENTRY = re.compile(r"[^\0]+")


def listed_in_commit(root: Path, commit: str) -> tuple[list[str], dict[str, str]]:
    """The files of `commit` and the blob ids of its regular ones, from its tree alone (one git
    call, no file looked at); a submodule's entry is not a file of this repository."""
    names: list[str] = []
    blobs: dict[str, str] = {}
    for line in _git_lines(root, "ls-tree", "-r", "--full-tree", commit):
        meta, _, path = line.partition("\t")  # "<mode> <type> <blob>\t<path>"
        mode, _, blob = meta.partition(" ")
        if mode == "160000" or not path:
            continue
        names.append(path)
        if mode in ("100644", "100755"):
            blobs[path] = blob.rpartition(" ")[2]
    return sorted(names), blobs


def listed_since_head(
    root: Path, head: str = "HEAD", *, stage: bool = True
) -> tuple[list[str], dict[str, str], list[str]]:
    """The files as they are now: HEAD's (`head`: its commit, when known), with what `git
    status` says differs from it (a changed file's blob no longer vouches for it, a new file is
    added, a deleted one goes); and the names status gave. Two git calls side by side; only
    the changed files are looked at. `stage`: as `uncommitted_names`'s."""
    with ThreadPoolExecutor(1) as pool:
        asked = pool.submit(uncommitted_names, root, stage=stage)
        names, blobs = listed_in_commit(root, head)  # none in a repository with no commit
        changed = asked.result()
    listed = set(names)
    for path in changed:
        blobs.pop(path, None)
        if os.path.lexists(root / path):
            listed.add(path)
        else:
            listed.discard(path)
    return sorted(listed), blobs, changed


def uncommitted_names(root: Path, *, stage: bool = True) -> list[str]:
    """The files that differ from HEAD (staged or not) and the untracked ones, as git status
    names them (a rename: both names). `stage`: a shadow's files may be staged to be compared
    (only in its session's own process: git fails that session's next `git add` at once while
    another process holds the index's lock)."""
    if stage and is_shadow(root):
        with contextlib.suppress(subprocess.CalledProcessError):
            return _staged_names(root)
    # No optional locks: status would refresh the index under index.lock, and the baseline's
    # `git add -A` in the same shadow (engine/steps/baseline.py) fails when it finds the lock taken.
    status = subprocess.run(
        ["git", "--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all"],
        cwd=root, capture_output=True, check=False, env=shadow_git_full_env(),
    )  # fmt: skip
    return _status_names(exact(status.stdout) if status.returncode == 0 else "")


def _staged_names(root: Path) -> list[str]:
    """`uncommitted_names` of a shadow, whose index is the session's own: every file staged (a
    staging is skipped when nothing wrote there since the last: base/staging.py), then the
    index compared with HEAD's tree, which looks at no file (git status looks at every one)."""

    command = ["git", "diff-index", "--cached", "--no-renames", "--name-only", "-z", "HEAD"]
    with index_lock(root):
        stage_all(root)
        out = subprocess.run(
            command, cwd=root, capture_output=True, check=True, env=shadow_git_full_env()
        ).stdout
    return [name for name in exact(out).split("\0") if name]


def _status_names(status: str) -> list[str]:
    """`git status --porcelain -z`: "XY path\0" each, but a rename or copy is "XY new\0old\0":
    its old name follows as a token of its own, with no status columns to cut."""
    names: list[str] = []
    tokens = iter(status.split("\0"))
    for entry in tokens:
        if len(entry) < 4:
            continue
        names.append(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:
            names.append(next(tokens, ""))
    return [name for name in names if name]
