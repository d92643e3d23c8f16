"""Parts of a file shown to the model: line ranges copied exactly from the file.

A region's line numbers are in its header (`big.py lines 4980-5012 of 6000`), never inside the
block, so the model can copy any lines of it into a SEARCH block as they are. Large files are
shown by the regions that matter (the symbols a request names, the lines around a traceback
frame) and an outline of the rest, not by their head."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.context.symbols import Symbol, parse_symbols
from tui_engineer.edits.parser import UnsafePath
from tui_engineer.edits.paths import resolve_safe_path

MAX_SYMBOL_LINES = 200  # a bigger symbol (a long class) is shown by its head and its outline
FRAME_CONTEXT = 12  # lines either side of a traceback frame when no small symbol encloses it
FRAME_SYMBOL_LINES = 150  # a frame's enclosing function up to this size is shown whole
MERGE_GAP = 3  # regions this close are shown as one
MAX_READ_BYTES = 4_000_000

_FENCES = {".py": "python", ".pyi": "python", ".js": "javascript", ".ts": "typescript"}
_FENCES |= {".tsx": "tsx", ".go": "go", ".rs": "rust", ".md": "markdown", ".toml": "toml"}


@dataclass(frozen=True)
class Region:
    path: str
    start: int  # 1-based, inclusive
    end: int  # 1-based, inclusive
    total: int  # lines in the file
    text: str  # the lines start..end as in the file, each ending in "\n"
    label: str = ""  # why it is shown: "def windowed(seq, n)", "traceback line 5012"

    def render(self) -> str:
        """A header naming the lines, then the lines exactly as in the file."""
        why = f" ({self.label})" if self.label else ""
        return f"{self.path} lines {self.start}-{self.end} of {self.total}{why}:\n" + fenced(
            self.path, self.text
        )


def fenced(path: str, text: str) -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    fence = "```"
    while fence in text:
        fence += "`"
    dot = path.rfind(".")
    language = _FENCES.get(path[dot:].lower(), "") if dot >= 0 else ""
    return f"{fence}{language}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"


def read_lines(root: Path, path: str) -> list[str] | None:
    """The file's lines (each with its "\\n"), or None when it is not a readable text file
    inside the repository (the same path checks as edits)."""
    try:
        target = resolve_safe_path(root, path)
        if not target.is_file() or target.stat().st_size > MAX_READ_BYTES:
            return None
        data = target.read_bytes()
    except (UnsafePath, OSError):
        return None
    if b"\0" in data[:8192]:
        return None
    return split_lines(data.decode("utf-8", "replace"))


def split_lines(text: str) -> list[str]:
    """Lines ending at "\n" only, as tree-sitter, git and editors count them: str.splitlines
    also breaks at form feeds and other separators, which would shift every line number."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def cut(path: str, lines: Sequence[str], start: int, end: int, label: str = "") -> Region:
    """Lines start..end (clamped to the file) as a region."""
    total = len(lines)
    start = max(1, min(start, total or 1))
    end = max(start, min(end, total))
    text = "".join(lines[start - 1 : end])
    if text and not text.endswith("\n"):
        text += "\n"
    return Region(path, start, end, total, text, label)


def region(root: Path, path: str, start: int, end: int, label: str = "") -> Region | None:
    """Lines start..end (1-based, inclusive) of `path` under `root`; None when the file cannot
    be shown (outside the repository, binary, missing)."""
    lines = read_lines(root, path)
    if lines is None:
        return None
    return cut(path, lines, start, end, label)


def file_symbols(path: str, lines: Sequence[str]) -> list[Symbol]:
    return parse_symbols(path, "".join(lines).encode("utf-8")) or []


def find(symbols: Sequence[Symbol], name: str) -> Symbol | None:
    """`name` as written (`Class.method`), else the first symbol whose last part is `name`."""
    exact = next((s for s in symbols if s.name == name), None)
    return exact or next((s for s in symbols if s.short == name.rsplit(".", 1)[-1]), None)


def symbol_span(symbol: Symbol) -> tuple[int, int, str]:
    """Lines to show for a symbol: all of it, or the head of a long one."""
    end = symbol.end
    if end - symbol.line + 1 > MAX_SYMBOL_LINES:
        end = symbol.line + MAX_SYMBOL_LINES - 1
    return symbol.line, end, symbol.signature or symbol.name


def frame_span(symbols: Sequence[Symbol], line: int) -> tuple[int, int, str]:
    """Lines to show for a traceback frame: the smallest function around it when that is
    short, else the lines around it."""
    around = [s for s in symbols if s.line <= line <= s.end]
    inner = min(around, key=lambda s: s.end - s.line, default=None)
    label = f"traceback line {line}"
    if inner is not None and inner.end - inner.line < FRAME_SYMBOL_LINES:
        return inner.line, inner.end, f"{label}, in {inner.name}"
    return line - FRAME_CONTEXT, line + FRAME_CONTEXT, label


def merge(spans: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping or nearly touching spans as one, labels joined, in file order."""
    merged: list[tuple[int, int, str]] = []
    for start, end, label in sorted(spans):
        if merged and start <= merged[-1][1] + MERGE_GAP:
            first, last, labels = merged[-1]
            joined = labels if label in labels.split("; ") else f"{labels}; {label}"
            merged[-1] = (first, max(last, end), joined)
        else:
            merged.append((start, end, label))
    return merged


def symbol_region(
    root: Path, name: str, path: str | None = None, repo_map: object | None = None
) -> Region | None:
    """The region of class/function `name` (`Class.method` allowed): in `path` when given,
    else in the file the repository map says defines it (`repo_map`, or a map built now)."""
    candidates = [path] if path else []
    if not candidates:
        from tui_engineer.context.repomap import RepoMap, build_map

        mapped = repo_map if isinstance(repo_map, RepoMap) else build_map(root)
        candidates = list(dict.fromkeys(p for p, _ in mapped.defining(name)))
    for candidate in candidates:
        lines = read_lines(root, candidate)
        if lines is None:
            continue
        symbol = find(file_symbols(candidate, lines), name)
        if symbol is not None:
            start, end, label = symbol_span(symbol)
            return cut(candidate, lines, start, end, label)
    return None
