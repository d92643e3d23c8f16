"""The files of a repository as git sees them, and file names mentioned in free text."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tui_engineer.context.git_listing import repo_file_names

_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,6}")


def list_repo_files(root: Path, limit: int | None = None) -> list[str]:
    """Tracked and untracked-but-not-ignored files (gitignore honoured), sorted; at most
    `limit` of them, so a caller that wants a few does not stat a huge repository."""
    listed: list[str] = []
    for name in repo_file_names(root):
        if limit is not None and len(listed) == limit:
            break
        if (root / name).is_file():  # --cached still names files deleted from the tree
            listed.append(name)
    return listed


def mentioned_paths(text: str, known: Iterable[str]) -> list[str]:
    """Files of the repo named in free text (a request, a traceback)."""
    known_set = set(known)
    found: list[str] = []
    for token in _PATHISH.findall(text):
        token = token.removeprefix("./")
        if token in known_set and token not in found:
            found.append(token)
    return found
