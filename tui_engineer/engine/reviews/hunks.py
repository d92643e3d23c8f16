"""A proposal's diff as units a reviewer keeps or drops: each hunk of a text file, and each file
git shows without hunks (a binary file, a pure rename, a mode change) as one unit.

A unit is named by `HunkRef(path, index)`: the file's path as the diff shows it (the new path;
the old one for a deletion) and the hunk's position in that file (0, 1, ...; `WHOLE_FILE` for a
file without hunks). Every front end counts hunks the same way from the same diff text, so a
reference made on screen names the same hunk here. Parsing is unidiff's.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from unidiff import PatchedFile, PatchSet
from unidiff.errors import UnidiffParseError

WHOLE_FILE = -1  # the index of the one unit of a file without hunks


@dataclass(frozen=True, order=True)
class HunkRef:
    path: str
    index: int  # position among the file's hunks; WHOLE_FILE for a file without hunks

    def label(self) -> str:
        """How a message names it: "calc.py hunk 2" (counted from 1), or "logo.png"."""
        return self.path if self.index == WHOLE_FILE else f"{self.path} hunk {self.index + 1}"


@dataclass(frozen=True)
class Unit:
    ref: HunkRef
    text: str  # the hunk as the diff shows it ("@@ ... @@" and its lines), or the file's header
    status: str  # the file's: A added, D deleted, R renamed, M modified


class DiffUnreadable(ValueError):
    """The diff could not be split into hunks (never expected from git's own output)."""


def _status(file: PatchedFile) -> str:
    if file.is_added_file:
        return "A"
    if file.is_removed_file:
        return "D"
    return "R" if file.is_rename else "M"


def _path(file: PatchedFile) -> str:
    # unidiff's `path` is the new name for renames; a deletion's target is /dev/null.
    return file.path


def parse(diff: str) -> list[PatchedFile]:
    if not diff.strip():
        return []
    try:
        return list(PatchSet(diff))
    except UnidiffParseError as err:
        raise DiffUnreadable(f"the diff could not be split into hunks: {err}") from None


def units(diff: str) -> list[Unit]:
    """Every unit of `diff`, in the diff's order."""
    found: list[Unit] = []
    for file in parse(diff):
        path, status = _path(file), _status(file)
        if not len(file):
            header = str(file.patch_info or "").strip()
            found.append(Unit(HunkRef(path, WHOLE_FILE), header, status))
            continue
        for index, hunk in enumerate(file):
            found.append(Unit(HunkRef(path, index), str(hunk), status))
    return found


@dataclass(frozen=True)
class KeptPlan:
    """How to build the tree of the kept units from the baseline: files taken whole from the
    full proposal, and a patch (kept hunks only) for files partly kept."""

    whole: tuple[tuple[str, str, str | None], ...]  # (status, path, old path of a rename)
    patch: str  # for `git apply` on the baseline; "" when no file is partly kept
    kept: int
    total: int


def kept_plan(diff: str, dropped: Collection[HunkRef]) -> KeptPlan:
    """What of `diff` stays when the `dropped` units go."""
    whole: list[tuple[str, str, str | None]] = []
    patches: list[str] = []
    kept = total = 0
    for file in parse(diff):
        path = _path(file)
        indexes = list(range(len(file))) or [WHOLE_FILE]
        keep = [i for i in indexes if HunkRef(path, i) not in dropped]
        total += len(indexes)
        kept += len(keep)
        if not keep:
            continue
        if len(keep) == len(indexes):
            old = _strip(file.source_file) if file.is_rename else None
            whole.append((_status(file), path, old))
            continue
        patches.append(_partial_file(file, keep))
    return KeptPlan(tuple(whole), "".join(patches), kept, total)


def _strip(name: str) -> str:
    return name[2:] if name[:2] in ("a/", "b/") else name


def _partial_file(file: PatchedFile, keep: Iterable[int]) -> str:
    """The file's header and only the kept hunks. Each hunk's old-side position is the
    baseline's, which is what the patch is applied to: later hunks need no renumbering."""
    part = PatchedFile(
        file.patch_info,
        file.source_file,
        file.target_file,
        file.source_timestamp,
        file.target_timestamp,
        file.is_binary_file,
    )
    part.extend(file[i] for i in keep)
    return str(part)


def summary(kept: int, total: int) -> str:
    """The review's line for a partial accept: "partial: 3 of 5 hunks"."""
    return f"partial: {kept} of {total} hunk{'s' if total != 1 else ''}"
