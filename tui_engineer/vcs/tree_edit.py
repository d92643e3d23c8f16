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
# A folder's tree past this size (about 6,000 entries) is listed and written again more slowly
# than a temporary index of the whole repository is made: one folder of 38,000 files took
# 0.11 s this way against 0.08 s for the index of 40,000.
WIDE_FOLDER = 256 * 1024


class TooWide(Exception):
    """A folder on the way to a changed path is too wide to write again by itself."""


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
    """The tree of commit `base` (None: nothing) with `entries` put in or taken out; TooWide
    when a folder on the way is (make the tree in an index then)."""
    changes = {os.fsencode(e.path): e for e in entries}
    start = f"{base}^{{tree}}" if base else None
    made = _folder(root, start, changes)
    if made is None:  # every file gone: the empty tree
        return run_git(root, "mktree", "-z", data=b"").stdout.decode().strip()
    return made


def _folder(root: Path, tree: str | None, changes: dict[bytes, Entry]) -> str | None:
    """`tree` (a folder's) with `changes` (paths relative to it) applied; None when empty.
    Entries stay ls-tree's lines, parsed only where changed: a folder may hold 40,000 files,
    and mktree sorts what it is given."""
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
        _mode, kind, sha = listing.get(name, b"- - -\t").partition(b"\t")[0].split(b" ")
        made = _folder(root, sha.decode() if kind == b"tree" else None, inner)
        if made is None:
            listing.pop(name, None)
        else:
            listing[name] = b"040000 tree %s\t%s" % (made.encode(), name)
    for name, entry in here.items():
        if entry.sha is not None:
            kind = "commit" if entry.mode == "160000" else "blob"
            listing[name] = f"{entry.mode} {kind} {entry.sha}\t".encode() + name
    if not listing:
        return None
    data = b"\0".join(listing.values()) + b"\0"
    return run_git(root, "mktree", "-z", data=data).stdout.decode().strip()


def _listed(root: Path, tree: str) -> dict[bytes, bytes]:
    """name -> its ls-tree line ("mode type id<TAB>name") of one folder."""
    if int(git_text(root, "cat-file", "-s", tree)) > WIDE_FOLDER:
        raise TooWide(tree)
    items = run_git(root, "ls-tree", "-z", tree).stdout.split(b"\0")[:-1]
    return dict(zip([item.partition(b"\t")[2] for item in items], items, strict=True))
