"""Path safety: every path a model names is checked here before anything is read or written.

The rules are strict on purpose (a legitimate edit never needs `..`, a backslash or git's own
files), and the final check is on the fully resolved path, so symlinks cannot smuggle a write
out of the repository."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from tui_engineer.edits.parser import UnsafePath

_DRIVE = re.compile(r"^[A-Za-z]:")


def _refuse(rel: str, reason: str) -> UnsafePath:
    shown = rel.replace("\0", "\\0")
    return UnsafePath(
        f"Refused path `{shown}`: {reason}. Nothing was changed: resend your edits without it."
    )


def _is_git_name(part: str) -> bool:
    """`.git` in any case, plus names some filesystems treat as `.git` (trailing dots/spaces,
    NTFS streams, the 8.3 short name)."""
    name = part.split(":", 1)[0].rstrip(". ").casefold()
    return name == ".git" or part.casefold() == "git~1"


def check_path_text(rel: str) -> PurePosixPath:
    """The repo-relative path written in `rel`, normalized, or UnsafePath for a hostile spelling."""
    if not rel or not rel.strip():
        raise _refuse(rel, "the path is empty")
    if "\0" in rel:
        raise _refuse(rel, "it contains a NUL byte")
    if rel.startswith(("/", "\\")) or _DRIVE.match(rel):
        raise _refuse(rel, "it is absolute; write the path relative to the repository root")
    if "\\" in rel:
        raise _refuse(
            rel, "it contains a backslash; write repo-relative paths with forward slashes"
        )
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts:
        raise _refuse(rel, "it names the repository root, not a file")
    if parts[0].startswith("~"):
        raise _refuse(
            rel, "it starts with `~` (a home folder); write it relative to the repository"
        )
    if ".." in parts:
        raise _refuse(rel, "it contains `..`; paths must stay inside the repository")
    if any(_is_git_name(p) for p in parts):
        raise _refuse(rel, "it is (or is inside) `.git`, git's own files, which edits never touch")
    return PurePosixPath(*parts)


def resolve_safe_path(root: Path, rel: str) -> Path:
    """The absolute, symlink-resolved path for repo-relative `rel`; raises UnsafePath when it
    would land outside `root` (the worktree root) or inside git's files."""
    clean = check_path_text(rel)
    base = root.resolve(strict=True)
    try:
        target = (base / clean).resolve()
    except (OSError, RuntimeError) as err:  # symlink loops
        raise _refuse(rel, "it goes through a symlink loop") from err
    if target == base or not target.is_relative_to(base):
        raise _refuse(rel, "it resolves (through a symlink) to a place outside the repository")
    if any(_is_git_name(p) for p in target.relative_to(base).parts):
        raise _refuse(rel, "it resolves (through a symlink) into `.git`, git's own files")
    return target


def repo_relative(root: Path, path: Path) -> str:
    """`path` (already resolved by resolve_safe_path) as a posix path relative to `root`."""
    return path.relative_to(root.resolve()).as_posix()
