"""Collect repository files for prompts, bounded so a big repo never floods the model."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

MAX_LISTED = 400
MAX_FILE_CHARS = 24_000
MAX_TOTAL_CHARS = 120_000
_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,6}")


def list_repo_files(root: Path, limit: int = MAX_LISTED) -> list[str]:
    """Tracked and untracked-but-not-ignored files, as git sees them (gitignore honoured)."""
    done = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    names = sorted({n for n in done.stdout.decode("utf-8", "replace").split("\0") if n})
    listed: list[str] = []
    for name in names:  # stop at the limit: a huge repo is not stat()ed file by file
        if len(listed) == limit:
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


def _read_text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def file_contents(root: Path, paths: Iterable[str], max_chars: int = MAX_TOTAL_CHARS) -> str:
    """The named files' contents as fenced blocks, within the character budgets."""
    parts: list[str] = []
    total = 0
    for rel in dict.fromkeys(paths):
        text = _read_text(root / rel)
        if text is None:
            continue
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + "\n[... file truncated ...]\n"
        if total + len(text) > max_chars:
            parts.append(f"{rel}: (not shown: context budget reached)")
            continue
        total += len(text)
        parts.append(f"{rel}\n```\n{text}\n```")
    return "\n\n".join(parts)
