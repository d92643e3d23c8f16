"""A file's change in a proposal, as git's `diff --name-status` says it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    status: str  # A, M, D, R (T, a type change, is reported as M)
    path: str
    old_path: str | None = None  # for renames


def parse_name_status(out: str) -> list[Change]:
    """`git diff --name-status -z`: a change per file; a copy is an added file."""
    return _changes([f for f in out.split("\0") if f])


def _changes(fields: list[str]) -> list[Change]:
    """Name-status fields (a status, then its one path or a rename's or copy's two) as changes."""
    changes: list[Change] = []
    i = 0
    while i < len(fields):
        status = fields[i][0]
        if status in "RC":
            old, new = fields[i + 1], fields[i + 2]
            i += 3
            changes.append(Change("R", new, old) if status == "R" else Change("A", new))
            continue
        changes.append(Change("M" if status == "T" else status, fields[i + 1]))
        i += 2
    return changes


def split_raw_patch(out: str) -> tuple[list[Change], str]:
    """`git diff --raw -z -p`: the changes (as `parse_name_status` gives them) and the patch,
    which is what the same diff prints without `--raw -z`. Each raw entry is ":modes shas
    STATUS" then its path, and a second one for a rename or a copy, each ending in NUL; a NUL
    then parts them from the patch."""
    fields: list[str] = []
    at = 0
    while out.startswith(":", at):
        end = out.index("\0", at)
        status = out[at:end].rsplit(" ", 1)[-1]
        names = 2 if status[:1] in ("R", "C") else 1
        parts = [status]
        for _ in range(names):
            start, end = end + 1, out.index("\0", end + 1)
            parts.append(out[start:end])
        fields += parts
        at = end + 1
    if out.startswith("\0", at):
        at += 1
    return _changes(fields), out[at:]
