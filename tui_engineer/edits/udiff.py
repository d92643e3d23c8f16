"""Unified diffs in a model reply (`--- a/x` / `+++ b/x` / `@@`), read leniently and turned into
the edits the rest of the protocol already applies: each hunk becomes a SEARCH/REPLACE of its
context and removed lines, so it is found by the same matching rules and refused the same way
when it fits nowhere or in several places.

Why not the unidiff library: models write hunk headers without line numbers (`@@ ... @@`) or
with counts that do not add up, and unidiff skips the first silently and rejects the second.
The line numbers are never trusted here; the lines themselves say where a hunk goes."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_engineer.edits.types import DeleteFile, Edit, ParseError, SearchReplace

_OLD = re.compile(r"^--- (?P<path>\S.*)$")
_NEW = re.compile(r"^\+\+\+ (?P<path>\S.*)$")
_HUNK = re.compile(r"^@@.*@@.*$|^@@\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
NULL = "/dev/null"


def starts_diff(lines: list[str], i: int) -> bool:
    """Does a file's diff start at line i (`--- old` followed by `+++ new`)?"""
    return (
        i + 1 < len(lines)
        and _OLD.match(lines[i].rstrip()) is not None
        and _NEW.match(lines[i + 1].rstrip()) is not None
    )


def _path(raw: str, prefix: str) -> str:
    path = raw.split("\t")[0].strip()  # `--- a/x.py\t2024-01-01 00:00` carries a timestamp
    if path.startswith(f"{prefix}/") and path != NULL:
        path = path[2:]
    return path


@dataclass
class _Hunk:
    search: list[str]
    replace: list[str]

    def changes(self) -> bool:
        return self.search != self.replace


def _hunk_body(lines: list[str], i: int) -> tuple[_Hunk, int]:
    """A hunk's lines from line i: until the next hunk, the next file, a fence or prose."""
    hunk = _Hunk([], [])
    while i < len(lines):
        line = lines[i]
        if _HUNK.match(line) or starts_diff(lines, i) or _FENCE.match(line):
            break
        if line.startswith("\\"):  # "\ No newline at end of file"
            i += 1
            continue
        if line.startswith("+"):
            hunk.replace.append(line[1:])
        elif line.startswith("-"):
            hunk.search.append(line[1:])
        elif line.startswith(" ") or not line:  # a blank context line often loses its space
            hunk.search.append(line[1:])
            hunk.replace.append(line[1:])
        else:
            break
        i += 1
    while hunk.search and hunk.replace and not hunk.search[-1] and not hunk.replace[-1]:
        hunk.search.pop()  # the blank line after a diff is the reply's, not the hunk's
        hunk.replace.pop()
    return hunk, i


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def read_file_diff(lines: list[str], i: int, number: int) -> tuple[list[Edit], int]:
    """The edits of one file's diff starting at line i (see starts_diff); `number` is the block
    number of its first hunk. Returns the edits and the index of the first line after it."""
    old, new = _path(lines[i][4:], "a"), _path(lines[i + 1][4:], "b")
    i += 2
    if new == NULL:
        while i < len(lines) and (_HUNK.match(lines[i]) or lines[i][:1] in "-\\"):
            i += 1  # the removed lines of a deleted file
        return [DeleteFile(old)], i
    if old not in (NULL, new):
        raise ParseError(
            f"Block {number}: the diff's `--- {old}` and `+++ {new}` name different files. "
            "To rename a file write `<<<<<<< RENAME old -> new` on its own line; a diff edits "
            "one file, named the same on both lines."
        )
    return read_hunks(lines, i, new, number, create=old == NULL)


def starts_hunk(line: str) -> bool:
    return _HUNK.match(line) is not None


def read_hunks(
    lines: list[str], i: int, new: str, number: int, *, create: bool = False
) -> tuple[list[Edit], int]:
    """The edits of the `@@` hunks from line i on, all for file `new` (created from nothing
    when `create`). Returns the edits and the index of the first line after them."""
    edits: list[Edit] = []
    while i < len(lines) and _HUNK.match(lines[i]):
        hunk, i = _hunk_body(lines, i + 1)
        if not hunk.changes():
            continue
        at = number + len(edits)
        if create:
            edits.append(SearchReplace(new, "", _text(hunk.replace)))
        elif not any(line.strip() for line in hunk.search):
            raise ParseError(
                f"Block {at} ({new}): this diff hunk only adds lines and has no unchanged lines "
                "around them, so where they go cannot be told. Include two or three unchanged "
                "lines above and below the added ones (as ' '-prefixed context lines)."
            )
        else:
            edits.append(SearchReplace(new, _text(hunk.search), _text(hunk.replace)))
    if not edits:
        raise ParseError(
            f"Block {number} ({new}): a diff header with no hunks that change anything. Each "
            "change needs an `@@ ... @@` line, then the lines: ' ' unchanged, '-' removed, "
            "'+' added."
        )
    return edits, i
