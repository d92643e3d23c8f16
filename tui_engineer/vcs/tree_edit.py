"""An accepted step's tree made from its base tree and the step's entries, folder by folder,
without an index: only the folders on the way to a changed path are read (`ls-tree`) and
written (`mktree`). A temporary index of the whole tree (read-tree, update-index, write-tree)
costs what the repository holds (0.08 s at 40,000 files); this costs what the step touched.

Used when no hook of the user's is given the index (commit_objects.py): the pre-commit,
prepare-commit-msg and commit-msg hooks see the commit as a staged index, so with any of them
present the index is still made. The tree is the same either way (tests/vcs/test_tree_edit.py
builds both).
"""

from __future__ import annotations

import os
from pathlib import Path

from tui_engineer.vcs.commit_objects import Entry
from tui_engineer.vcs.plumbing import git_text, run_git

INDEX_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg")

# name -> (mode, type, object id) of one folder's entries, as ls-tree lists them
Listing = dict[bytes, tuple[bytes, bytes, bytes]]


def hooks_see_an_index(root: Path) -> bool:
    """Whether any hook given the temporary index would run: a hook file where git looks for
    it (core.hooksPath too), or hooks set in git's config (newer git's `hook.<name>.*`)."""
    args = [arg for name in INDEX_HOOKS for arg in ("--git-path", f"hooks/{name}")]
    for line in git_text(root, "rev-parse", *args).splitlines():
        path = Path(line) if os.path.isabs(line) else root / line
        if path.is_file() and os.access(path, os.X_OK):
            return True
    configured = run_git(root, "config", "--get-regexp", r"^hook\.", check=False)
    return bool(configured.stdout.strip())


def tree_with(root: Path, base: str | None, entries: list[Entry]) -> str:
    """The tree of commit `base` (None: nothing) with `entries` put in or taken out."""
    changes = {os.fsencode(e.path): e for e in entries}
    start = f"{base}^{{tree}}" if base else None
    made = _folder(root, start, changes)
    if made is None:  # every file gone: the empty tree
        return run_git(root, "mktree", "-z", data=b"").stdout.decode().strip()
    return made


def _folder(root: Path, tree: str | None, changes: dict[bytes, Entry]) -> str | None:
    """`tree` (a folder's) with `changes` (paths relative to it) applied; None when empty."""
    listing = _listed(root, tree) if tree else {}
    below: dict[bytes, dict[bytes, Entry]] = {}
    here: dict[bytes, Entry] = {}
    for path, entry in changes.items():
        name, slash, rest = path.partition(b"/")
        if slash:
            below.setdefault(name, {})[rest] = entry
        else:
            here[name] = entry
    # Removals first, then folders, then files: a file replaced by a folder of that name, and
    # a folder replaced by a file, both come out right.
    for name in [name for name, entry in here.items() if entry.sha is None]:
        listing.pop(name, None)
    for name, inner in below.items():
        _mode, kind, sha = listing.get(name, (b"", b"", b""))
        made = _folder(root, sha.decode() if kind == b"tree" else None, inner)
        if made is None:
            listing.pop(name, None)
        else:
            listing[name] = (b"040000", b"tree", made.encode())
    for name, entry in here.items():
        if entry.sha is not None:
            kind = b"commit" if entry.mode == "160000" else b"blob"
            listing[name] = (entry.mode.encode(), kind, entry.sha.encode())
    if not listing:
        return None
    data = b"".join(
        b"%s %s %s\t%s\0" % (mode, kind, sha, name) for name, (mode, kind, sha) in listing.items()
    )
    return run_git(root, "mktree", "-z", data=data).stdout.decode().strip()


def _listed(root: Path, tree: str) -> Listing:
    out = run_git(root, "ls-tree", "-z", tree).stdout
    listing: Listing = {}
    for item in filter(None, out.split(b"\0")):
        meta, name = item.split(b"\t", 1)
        mode, kind, sha = meta.split(b" ")
        listing[name] = (mode, kind, sha)
    return listing
