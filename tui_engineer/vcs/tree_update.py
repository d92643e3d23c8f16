"""After the branch moved: make the step's paths in the user's tree and index match the commit.

Idempotent, so an interrupted accept is finished by running it again. Files are written by
`git checkout-index` from a copy of the user's index (git's own checkout: filters, modes,
symlinks, and it replaces a non-folder in the way rather than writing through it). The updated
index is published by renaming a complete file over `.git/index`; index.lock is never taken, so a
kill at any moment cannot leave it behind. Only the step's entries change: the user's other
staged and unstaged work stays as it was.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

from tui_engineer.vcs.plumbing import run_git

_LOCK_WAIT_SECONDS = 5.0


def tree_entries(root: Path, commit: str | None, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, blob sha) in `commit`, for those of `paths` it holds."""
    if commit is None or not paths:
        return {}
    literal = [f":(literal){p}" for p in paths]
    out = run_git(root, "ls-tree", "-r", "-z", commit, "--", *literal).stdout
    found: dict[str, tuple[str, str]] = {}
    for item in filter(None, out.split(b"\0")):
        meta, path = item.split(b"\t", 1)
        mode, _kind, sha = meta.decode().split()
        found[path.decode("utf-8", "surrogateescape")] = (mode, sha)
    return found


def _remove(root: Path, rel: str) -> None:
    target = root / rel
    if target.is_symlink() or target.is_file():
        target.unlink()
    for folder in target.parents:  # folders the step emptied go too, as with git rm
        if folder == root or not folder.is_relative_to(root):
            return
        if folder.is_symlink() or not folder.is_dir() or any(folder.iterdir()):
            return
        folder.rmdir()


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha1(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def _publish_index(gitdir: Path, new_index: Path, seen: str | None) -> bool:
    """Rename the new index over the user's; False if the user's changed since we copied it."""
    real = gitdir / "index"
    deadline = time.monotonic() + _LOCK_WAIT_SECONDS
    while (gitdir / "index.lock").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # a git command of the user's is writing the index: let it finish
    if _digest(real) != seen:
        return False
    staged = gitdir / "tui-engineer-index.new"
    shutil.copyfile(new_index, staged)
    os.replace(staged, real)
    return True


def write_step(root: Path, gitdir: Path, commit: str, paths: list[str]) -> None:
    """Files and index entries of `paths` become what `commit` holds (absent if it has none)."""
    entries = tree_entries(root, commit, paths)
    gone = [p for p in paths if p not in entries]
    for rel in gone:
        _remove(root, rel)
    with tempfile.TemporaryDirectory(prefix="tui-engineer-accept-") as scratch:
        index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        for _attempt in range(5):
            seen = _digest(gitdir / "index")
            if seen is not None:
                shutil.copyfile(gitdir / "index", index)
            else:
                index.unlink(missing_ok=True)
            info = b"".join(
                f"{mode} {sha}\t{path}".encode("utf-8", "surrogateescape") + b"\0"
                for path, (mode, sha) in entries.items()
            )
            if info:
                run_git(root, "update-index", "-z", "--index-info", env=env, data=info)
            if gone:
                data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in gone)
                run_git(root, "update-index", "-z", "--force-remove", "--stdin", env=env, data=data)
            if entries:
                data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in entries)
                run_git(root, "checkout-index", "-f", "-u", "-z", "--stdin", env=env, data=data)
            if _publish_index(gitdir, index, seen):
                return
