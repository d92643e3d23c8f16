"""What a step's files hold in a commit and in the user's tree, as blob shas: the checks before
an accept (the user changed none of them since the proposal), after a crash (which ones the user
edited since) and before an undo compare these."""

from __future__ import annotations

import os
from pathlib import Path

import git


def tree_blobs(repo: git.Repo, commit: str | None, paths: list[str]) -> dict[str, str]:
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


def conflicts(repo: git.Repo, root: Path, baseline: str, paths: list[str]) -> list[str]:
    expected = tree_blobs(repo, baseline, paths)
    for p, sha in list(expected.items()):
        if (root / p).is_symlink():  # compare symlinks by their target text
            expected[p] = f"link:{repo.git.cat_file('blob', sha)}"
    actual = _work_blobs(repo, root, paths)
    return [p for p in paths if expected.get(p) != actual.get(p)]
