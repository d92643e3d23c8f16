"""Path safety: every path a model names is checked here before anything is read or written.

The rules are strict on purpose (a legitimate edit never needs `..`, a backslash or git's own
files), and the final check is on the fully resolved path, so symlinks cannot smuggle a write
out of the repository."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from tui_engineer.base.names import readable
from tui_engineer.edits.parser import UnsafePath

REPLACEMENT = "\ufffd"  # how a byte of a name that is not UTF-8 is shown

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


def _exact_part(folder: Path, part: str, rel: str) -> str:
    """The entry of `folder` that `part` names. The model reads a file name that is not UTF-8
    with U+FFFD for each such byte (names.readable) and writes it back so: it stands for the
    one entry shown that way, never for a new file named with U+FFFD."""
    if REPLACEMENT not in part or os.path.lexists(folder / part):
        return part
    try:
        found = [name for name in os.listdir(folder) if readable(name) == part]
    except OSError:
        found = []
    if len(found) == 1:
        return found[0]
    if found:
        raise _refuse(
            rel,
            f"{len(found)} files are shown by this name (they differ only in bytes that are "
            "not UTF-8), so it cannot say which one; leave them out of your edits",
        )
    raise _refuse(
        rel,
        f"no file has this name, and `{REPLACEMENT}` stands for a byte of a file name that is "
        "not UTF-8; name an existing file as it was shown to you, or give a new file a name "
        f"without `{REPLACEMENT}`",
    )


def _exact(base: Path, clean: PurePosixPath, rel: str) -> PurePosixPath:
    """`clean` with each part shown with U+FFFD replaced by the entry it stands for."""
    if REPLACEMENT not in str(clean):
        return clean
    parts: list[str] = []
    for part in clean.parts:
        parts.append(_exact_part(base.joinpath(*parts), part, rel))
    return PurePosixPath(*parts)


def resolve_safe_path(root: Path, rel: str) -> Path:
    """The absolute, symlink-resolved path for repo-relative `rel`; raises UnsafePath when it
    would land outside `root` (the worktree root) or inside git's files."""
    base = root.resolve(strict=True)
    clean = _exact(base, check_path_text(rel), rel)
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
