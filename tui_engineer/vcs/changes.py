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
    fields = [f for f in out.split("\0") if f]
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
