"""After the branch moved: make the step's paths in the user's tree and index match the commit.

Idempotent, so an interrupted accept is finished by running it again. Files are written whole or
not at all: `git checkout-index` (git's own checkout: filters, modes, symlinks) writes them
beside, in `.git/tui-engineer-stage/`, and only once all are there is each renamed into place;
a full disk (or a kill) while they are written leaves the user's files as they were, never a
half file, and the index is updated last. The updated
index is published by renaming a complete file over `.git/index`; index.lock is never taken, so a
kill at any moment cannot leave it behind. Only the step's entries change: the user's other
staged and unstaged work stays as it was.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import git

from tui_engineer.base.disk import no_room, on_disk
from tui_engineer.vcs.plumbing import run_git

STAGE = "tui-engineer-stage"  # in the git folder: the step's files before they are renamed

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


def checkout_size(root: Path, commit: str) -> int:
    """What checking out `commit`'s files takes on disk, each rounded up to whole blocks
    (0 when git cannot say)."""
    done = run_git(root, "ls-tree", "-r", "-l", "-z", commit, check=False)
    sizes = (item.split(b"\t", 1)[0].split()[-1] for item in done.stdout.split(b"\0") if item)
    return on_disk([int(n) for n in sizes if n.isdigit()])


def _needed(root: Path, entries: dict[str, tuple[str, str]]) -> int:
    shas = "".join(f"{sha}\n" for _mode, sha in entries.values()).encode()
    out = run_git(root, "cat-file", "--batch-check=%(objectsize)", data=shas).stdout
    return on_disk([int(n) for n in out.split() if n.isdigit()])


def _stage(
    root: Path, gitdir: Path, entries: dict[str, tuple[str, str]], env: dict[str, str]
) -> Path:
    """The step's files written whole beside the tree (git's checkout), not yet in place."""
    stage = gitdir / STAGE
    shutil.rmtree(stage, ignore_errors=True)  # a kill's leftover
    data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in entries)
    try:
        run_git(
            root, "checkout-index", "-f", "-z", "--stdin", f"--prefix={stage}/", env=env, data=data
        )
    except git.GitCommandError:
        shutil.rmtree(stage, ignore_errors=True)
        full = no_room(
            gitdir,
            _needed(root, entries),
            "Writing the accepted step's files failed",
            "The step is committed; your files are as they were. Free some space, then start "
            "tui-engineer again: it writes them from the commit.",
        )
        if full is not None:
            raise full from None
        raise
    return stage


def _place(stage: Path, root: Path, rel: str) -> None:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)  # a folder the step replaces by a file
    try:
        os.replace(stage / rel, target)
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
        beside = target.with_name(f".{target.name}.tui-engineer-new")  # the git folder is
        try:  # on another file system: copied next to it first
            shutil.move(stage / rel, beside)
            os.replace(beside, target)
        except OSError:
            beside.unlink(missing_ok=True)  # a half copy is never left in the user's tree
            raise


def _build_index(
    root: Path, gitdir: Path, index: Path, entries: dict[str, tuple[str, str]], gone: list[str]
) -> str | None:
    """A copy of the user's index with the step's entries; the digest of the one copied."""
    env = {"GIT_INDEX_FILE": str(index)}
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
    return seen


def write_step(root: Path, gitdir: Path, commit: str, paths: list[str]) -> None:
    """Files and index entries of `paths` become what `commit` holds (absent if it has none):
    the files written beside then renamed into place, the index last."""
    entries = tree_entries(root, commit, paths)
    gone = [p for p in paths if p not in entries]
    with tempfile.TemporaryDirectory(prefix="tui-engineer-accept-") as scratch:
        index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        seen = _build_index(root, gitdir, index, entries, gone)
        stage = _stage(root, gitdir, entries, env) if entries else None
        for rel in gone:
            _remove(root, rel)
        if stage is not None:
            for rel in entries:
                _place(stage, root, rel)
            shutil.rmtree(stage, ignore_errors=True)
        for attempt in range(5):
            if attempt:  # the user's index changed since it was copied: copied again
                seen = _build_index(root, gitdir, index, entries, gone)
            if entries:  # the stat data of the files just renamed into place, only theirs
                literal = [f":(literal){p}" for p in entries]
                run_git(root, "add", "--refresh", "--", *literal, env=env, check=False)
            if _publish_index(gitdir, index, seen):
                return
