"""The diff as data: a unified git diff parsed into files, hunks and numbered lines, and the
screen rows (unified or side by side) the diff viewer draws."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from tui_engineer.base.names import readable

Side = Literal["old", "new"]
TAB = "    "
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class DiffLine:
    """One line of a hunk; `old_idx`/`new_idx` index the file's old/new side for highlighting."""

    kind: str  # " " context, "+" added, "-" removed
    text: str
    old_no: int | None
    new_no: int | None
    old_idx: int = -1
    new_idx: int = -1


@dataclass
class Hunk:
    header: str
    lines: list[DiffLine] = field(default_factory=list)


@dataclass
class FileDiff:
    """One file's part of the diff. `status` is "A", "M", "D" or "R" ("" for plain content)."""

    old_path: str
    new_path: str
    status: str = "M"
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    written: bool = False  # written by the step's test runs, not by its authors (vcs/written.py)
    old_side: list[str] = field(default_factory=list)
    new_side: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.old_path if self.status == "D" else self.new_path

    @property
    def added(self) -> int:
        return sum(line.kind == "+" for hunk in self.hunks for line in hunk.lines)

    @property
    def removed(self) -> int:
        return sum(line.kind == "-" for hunk in self.hunks for line in hunk.lines)


def _strip_prefix(path: str) -> str:
    path = path.strip().strip('"').split("\t")[0]
    if path == "/dev/null":
        return ""
    return path[2:] if path[:2] in ("a/", "b/") else path


def parse_unified_diff(diff: str) -> list[FileDiff]:
    """Split a (git) unified diff into files and hunks; tolerant of plain `diff -u` output."""
    files: list[FileDiff] = []
    current: FileDiff | None = None
    hunk: Hunk | None = None
    old_no = new_no = 0
    for raw in diff.splitlines():
        if raw.startswith("diff --git "):
            paths = raw[len("diff --git ") :].split(" b/", 1)
            old = _strip_prefix(paths[0])
            current = FileDiff(old, paths[1] if len(paths) > 1 else old)
            files.append(current)
            hunk = None
        elif hunk is not None and raw[:1] in (" ", "+", "-", "") and current is not None:
            kind = raw[:1] or " "
            # Contents that are not UTF-8 read with U+FFFD (a surrogate cannot be drawn).
            line = DiffLine(kind, readable(raw[1:]).replace("\t", TAB), None, None)
            if kind != "+":
                line.old_no, old_no = old_no, old_no + 1
            if kind != "-":
                line.new_no, new_no = new_no, new_no + 1
            hunk.lines.append(line)
        elif raw.startswith("@@"):
            match = _HUNK.match(raw)
            if current is None:
                current = FileDiff("", "")
                files.append(current)
            hunk = Hunk(raw)
            current.hunks.append(hunk)
            old_no, new_no = (int(match[1]), int(match[2])) if match else (1, 1)
        elif raw.startswith("--- ") and hunk is None:
            if current is None or current.hunks:
                current = FileDiff("", "")
                files.append(current)
            current.old_path = _strip_prefix(raw[4:]) or current.old_path
            if raw[4:].strip() == "/dev/null":
                current.status = "A"
        elif raw.startswith("+++ ") and current is not None and hunk is None:
            current.new_path = _strip_prefix(raw[4:]) or current.new_path
            if raw[4:].strip() == "/dev/null":
                current.status = "D"
        elif current is not None:
            _header_line(current, raw)
    for file in files:
        index_sides(file)
    return files


def _header_line(file: FileDiff, raw: str) -> None:
    if raw.startswith("new file mode"):
        file.status = "A"
    elif raw.startswith("deleted file mode"):
        file.status = "D"
    elif raw.startswith("rename from "):
        file.status, file.old_path = "R", raw[len("rename from ") :]
    elif raw.startswith("rename to "):
        file.status, file.new_path = "R", raw[len("rename to ") :]
    elif raw.startswith("Binary files") or raw.startswith("GIT binary patch"):
        file.binary = True


def index_sides(file: FileDiff) -> None:
    """Number each line within the old and new sides, which are highlighted as code."""
    for hunk in file.hunks:
        for line in hunk.lines:
            if line.kind != "+":
                line.old_idx = len(file.old_side)
                file.old_side.append(line.text)
            if line.kind != "-":
                line.new_idx = len(file.new_side)
                file.new_side.append(line.text)


@dataclass(frozen=True)
class Row:
    """One screen row: a file header, a hunk header, a unified line or a side-by-side pair."""

    kind: Literal["file", "hunk", "line", "pair"]
    file: int
    text: str = ""
    left: DiffLine | None = None
    right: DiffLine | None = None
    hunk: int = -1  # the hunk's position in its file (-1: the file header, engine.hunks.WHOLE_FILE)


def build_rows(files: list[FileDiff], split: bool) -> list[Row]:
    rows: list[Row] = []
    for index, file in enumerate(files):
        rows.append(Row("file", index))
        if file.binary and not file.hunks:
            rows.append(Row("hunk", index, "Binary file: not shown"))
        for number, hunk in enumerate(file.hunks):
            if hunk.header:
                rows.append(Row("hunk", index, hunk.header, hunk=number))
            rows.extend(_pairs(hunk, index, number) if split else _unified(hunk, index, number))
    return rows


def _unified(hunk: Hunk, index: int, number: int) -> Iterator[Row]:
    for line in hunk.lines:
        yield Row("line", index, left=line, hunk=number)


def _pairs(hunk: Hunk, index: int, number: int) -> Iterator[Row]:
    """Context on both sides; a run of removals is paired with the additions that follow it."""
    removed: list[DiffLine] = []
    added: list[DiffLine] = []

    def flush() -> Iterator[Row]:
        for pos in range(max(len(removed), len(added))):
            left = removed[pos] if pos < len(removed) else None
            right = added[pos] if pos < len(added) else None
            yield Row("pair", index, left=left, right=right, hunk=number)
        removed.clear()
        added.clear()

    for line in hunk.lines:
        if line.kind == "-":
            if added:
                yield from flush()
            removed.append(line)
        elif line.kind == "+":
            added.append(line)
        else:
            yield from flush()
            yield Row("pair", index, left=line, right=line, hunk=number)
    yield from flush()
