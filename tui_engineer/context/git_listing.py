"""What git lists of a tree: the files' names, and the blob ids it vouches for (a file whose
bytes are as its index entry, or as a commit holds them, need not be read to be known)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tui_engineer.base.names import exact
from tui_engineer.base.safe_git import shadow_git_full_env


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


_STAGED = re.compile(r"(\d{6}) ([0-9a-f]{40,64}) (\d)\t(.*)", re.DOTALL)


def listed_with_blobs(root: Path) -> tuple[list[str], dict[str, str]]:
    """`repo_file_names`, and path -> blob id of the tracked regular files, in one git call
    (`ls-files -s` prints the untracked ones as bare names)."""
    names: set[str] = set()
    blobs: dict[str, str] = {}
    args = ("ls-files", "-s", "--cached", "--others", "--exclude-standard")
    for line in _git_lines(root, *args):
        staged = _STAGED.fullmatch(line)
        if staged is None:
            names.add(line)
            continue
        mode, blob, stage, path = staged.groups()
        names.add(path)
        if mode in ("100644", "100755") and stage == "0":
            blobs[path] = blob
    return sorted(names), blobs


def listed_as_now(root: Path) -> tuple[list[str], dict[str, str]]:
    """`listed_with_blobs`, less the blobs of the files git's stat check finds changed: the
    blob ids left vouch for the files' bytes."""
    with ThreadPoolExecutor(1) as pool:  # git's own stat check beside its listing
        changed = pool.submit(modified, root)
        names, blobs = listed_with_blobs(root)
        for path in changed.result():
            blobs.pop(path, None)
    return names, blobs


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


def modified(root: Path) -> set[str]:
    """The files whose bytes in the tree may differ from the index's: git compares its stats
    (`ls-files -m`; those are read and hashed instead)."""
    return set(_git_lines(root, "ls-files", "-m"))
