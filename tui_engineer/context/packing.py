"""What a prompt shows of the repository, packed to a character budget: a map (the files that
matter with their classes and functions, then every other file by name or, when there are too
many, by folder) and the contents of the relevant files, whole when small, else the regions that
matter with an outline of the rest."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.names import readable
from tui_engineer.context.listing import map_listing
from tui_engineer.context.ranking import (
    Focus,
    Ranked,
    frames,
    named_identifiers,
    rank,
    recent_changes,
    relevant,
)
from tui_engineer.context.regions import (
    Region,
    cut,
    fenced,
    file_symbols,
    find,
    frame_span,
    merge,
    read_lines,
    split_lines,
    symbol_span,
)
from tui_engineer.context.repomap import RepoMap, build_map, names_unread
from tui_engineer.context.symbols import Symbol

MAX_TOTAL_CHARS = 120_000  # the default budget: context_budget's 30,000 tokens
MAX_FILE_CHARS = 24_000  # a file up to this size is shown whole when the budget allows
MAP_SHARE = 4  # the map gets at most 1/MAP_SHARE of the budget ...
MAP_MIN, MAP_MAX = 1_500, 30_000  # ... within these bounds
OUTLINE_CHARS = 3_000  # the outline of a large file beside its regions
HEAD_LINES = 40  # lines from the top of a large file (its imports) when there is room
MIN_REGION_LINES = 8  # a region cut shorter than this is not worth showing
NOT_SHOWN = "(not shown: context budget reached)"
MAX_CALLED = 3  # functions called on a failing line shown beside its frame
MAX_MENTIONS = 3  # places a large file mentions a named symbol, shown when nothing else points


@dataclass
class Context:
    listing: str  # the map of the repository
    contents: str  # the relevant files, whole or by regions
    shown: list[str] = field(default_factory=list)  # files whose contents (or parts) are in
    ranked: list[Ranked] = field(default_factory=list)


def gather_context(
    root: Path,
    request: str,
    *,
    step_files: Sequence[str] = (),
    step_text: str = "",
    failures: str = "",
    budget_chars: int = MAX_TOTAL_CHARS,
    cache_root: Path | None = None,
    repo_map: RepoMap | None = None,
    buffers: Mapping[str, str] | None = None,
    seconds: float | None = None,
) -> Context:
    """The map and contents for a prompt about `request` (and a step), within `budget_chars`.
    `buffers`: files' text as an editor holds it (unsaved changes), shown instead of the
    saved file. `seconds`: the map's time bound (build_map) when it is built here; one given
    cut short is built again only to read a file the text names that it did not read."""
    repo = repo_map
    text = "\n".join([request, step_text, *step_files])
    if repo is None or (repo.left and names_unread(repo, text)):
        bound = seconds if repo is None else 0.0
        repo = build_map(root, cache_root=cache_root, text=text, seconds=bound)
    focus = Focus(f"{request}\n{step_text}", step_files, failures)
    ranked = rank(repo, focus, recent_changes(root, now=repo.uncommitted))  # status: the map's
    map_budget = max(MAP_MIN, min(MAP_MAX, budget_chars // MAP_SHARE))
    # Names the text gave that the repository defines: a large file with nothing else pointing
    # into it (a test module the step names) is shown where it mentions them.
    named = list(dict.fromkeys(s.short for r in ranked for s in r.symbols))
    budget = max(0, budget_chars - MAP_MIN)
    contents, shown, whole = _contents(repo, relevant(ranked), budget, named, buffers or {})
    room = min(map_budget, max(MAP_MIN, budget_chars - len(contents)))
    listing = map_listing(repo, ranked, whole, room) + cut_short(repo)
    # Names (and contents) the model reads: a byte that is not UTF-8 shows as U+FFFD.
    return Context(readable(listing), readable(contents), shown, ranked)


def cut_short(repo: RepoMap) -> str:
    """The map's own word that it is not whole (never cut silently), else nothing."""
    if not repo.left:
        return ""
    return (
        f"\n(The map was cut short: {repo.left:,} source files were not read in time, so "
        "their symbols are not listed above; their names are. A SHOW line shows any of them.)"
    )


# ----- contents


@dataclass
class _Room:
    chars: int

    def fits(self, text: str) -> bool:
        return len(text) + 2 <= self.chars

    def take(self, text: str) -> str:
        self.chars -= len(text) + 2
        return text


def _contents(
    repo: RepoMap,
    ranked: Sequence[Ranked],
    budget: int,
    named: Sequence[str] = (),
    buffers: Mapping[str, str] | None = None,
) -> tuple[str, list[str], set[str]]:
    """(text, files shown in part or whole, files shown whole)."""
    root = repo.root
    room = _Room(budget)
    parts: list[str] = []
    shown: list[str] = []
    whole: set[str] = set()
    for entry in ranked:
        held = (buffers or {}).get(entry.path)
        lines = read_lines(root, entry.path) if held is None else split_lines(held)
        if lines is None:
            continue
        text = "".join(lines)
        block = f"{entry.path}\n{fenced(entry.path, text)}"
        if len(text) <= MAX_FILE_CHARS and room.fits(block):
            parts.append(room.take(block))
            shown.append(entry.path)
            whole.add(entry.path)
            continue
        mapped = repo.files.get(entry.path)  # built from these very files a moment ago
        symbols = mapped.symbols if mapped and mapped.parsed else file_symbols(entry.path, lines)
        part = _by_regions(entry, lines, symbols, room, named)
        parts.append(part or f"{entry.path}: {NOT_SHOWN}")
        if part:
            shown.append(entry.path)
    return "\n\n".join(parts), shown, whole


def _spans(entry: Ranked, symbols: Sequence[Symbol]) -> list[tuple[int, int, str]]:
    """The lines that matter in a large file, most important first."""
    spans = [frame_span(symbols, line) for line in reversed(entry.lines)]
    by_name = {s.name: s for s in symbols}
    for named in entry.symbols:
        symbol = by_name.get(named.name, named)  # the file as it is now, not the cached map
        spans.append(symbol_span(symbol))
    return spans


def _mentions(
    lines: Sequence[str], symbols: Sequence[Symbol], named: Sequence[str]
) -> list[tuple[int, int, str]]:
    """Where a file mentions the names the request gave (the tests of a function, its
    callers): the function around each of the first few mentions, or the lines around it."""
    if not named:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in named) + r")\b")
    spans: list[tuple[int, int, str]] = []
    for number, line in enumerate(lines, start=1):
        found = pattern.search(line)
        if found is None or any(start <= number <= end for start, end, _ in spans):
            continue
        start, end, _ = frame_span(symbols, number)
        spans.append((start, end, f"mentions {found.group()}, line {number}"))
        if len(spans) == MAX_MENTIONS:
            break
    return spans


def _by_regions(
    entry: Ranked, lines: list[str], symbols: list[Symbol], room: _Room, named: Sequence[str] = ()
) -> str:
    """A large file (or one the budget cannot hold whole): its regions that matter, then an
    outline of its symbols, with a line saying how to see the rest."""
    total = len(lines)
    header = (
        f"{entry.path} ({total:,} lines; shown by the regions that matter: each block is a copy "
        "of the file's lines named in its header)"
    )
    spans = _spans(entry, symbols)
    spans = spans or _mentions(lines, symbols, named) or [(1, total, "the top of the file")]
    outline = _outline(entry.path, symbols, [s[0] for s in spans], OUTLINE_CHARS)
    footer = (
        f"(Other lines of {entry.path} are not shown. To see them, ask "
        f"`<<<<<<< SHOW {entry.path}:START-END` or `<<<<<<< SHOW {entry.path}::name`.)"
    )
    reserve = len(header) + len(footer) + 40  # the footer may name lines instead
    if not room.fits(" " * (reserve + 400)):
        return ""
    first = symbols[0].line if symbols else total + 1
    if first > 1 and spans[-1][2] != "the top of the file":
        spans.append((1, min(first - 1, HEAD_LINES), "the top of the file"))
    # The outline is kept room for: it tells the model where everything else is.
    chars = room.chars - reserve - (len(outline) + 2 if outline else 0)
    if spans[0][2] == "the top of the file":  # nothing pointed into the file: its head
        chars = min(chars, MAX_FILE_CHARS)
    budget = _Room(chars)
    regions = []
    for start, end, label in _ordered(spans):
        region = _fitting(entry.path, lines, start, end, label, budget)
        if region is not None:
            regions.append((region.start, region.end, budget.take(region.render())))
    if not regions:
        return ""
    if len(regions) == 1 and regions[0][0] == 1 and spans[0][2] == "the top of the file":
        last = regions[0][1]  # the head only: name the next lines to ask for
        footer = (
            ""
            if last >= total
            else (
                f"(Lines {last + 1}-{total} of {entry.path} are not shown. To see more, ask "
                f"`<<<<<<< SHOW {entry.path}:{last + 1}-{min(total, last + 200)}` or "
                f"`<<<<<<< SHOW {entry.path}::name`.)"
            )
        )
    parts = [header, *(text for _, _, text in sorted(regions)), outline, footer]
    text = "\n\n".join(part for part in parts if part)
    room.take(text)
    return text


def _ordered(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Merged spans, the most important (first listed) first: they get the room first."""
    merged = merge(spans)
    rank = {span: index for index, span in enumerate(spans)}

    def importance(span: tuple[int, int, str]) -> int:
        inside = [i for s, i in rank.items() if span[0] <= s[0] and s[1] <= span[1]]
        return min(inside, default=len(spans))

    return sorted(merged, key=importance)


def _fitting(
    path: str, lines: list[str], start: int, end: int, label: str, room: _Room
) -> Region | None:
    """The region start..end, cut short (saying so) when the room cannot hold it all."""
    region = cut(path, lines, start, end, label)
    if room.fits(region.render()):
        return region
    low, high = MIN_REGION_LINES, region.end - region.start
    best = None
    while low <= high:  # the longest head of the region that fits
        middle = (low + high) // 2
        trial = cut(path, lines, region.start, region.start + middle - 1, f"{label}; cut short")
        if room.fits(trial.render()):
            best, low = trial, middle + 1
        else:
            high = middle - 1
    return best


def _outline(path: str, symbols: Sequence[Symbol], near: Sequence[int], limit: int) -> str:
    """The file's symbols with their line ranges; when they do not all fit, those nearest the
    shown regions (`near`: their first lines), in line order."""
    rows = {
        s: f"{'  ' * (1 + s.name.count('.'))}{s.line}-{s.end}: {s.signature or s.name}"
        for s in symbols
    }
    head = f"Outline of {path} (line ranges):"
    order = sorted(symbols, key=lambda s: min((abs(s.line - n) for n in near), default=s.line))
    kept: list[Symbol] = []
    used = len(head) + 60
    for symbol in order:
        if used + len(rows[symbol]) + 1 > limit:
            break
        kept.append(symbol)
        used += len(rows[symbol]) + 1
    if not kept:
        return ""
    lines = [head, *(rows[s] for s in sorted(kept, key=lambda s: s.line))]
    if len(kept) < len(symbols):
        lines.append(f"  ({len(symbols) - len(kept)} more not listed: ask SHOW {path}::name)")
    return "\n".join(lines)


def frame_regions(
    root: Path, report: str, budget_chars: int, repo_map: RepoMap | None = None
) -> str:
    """The code around each traceback frame of a test report that lies in the repository, the
    innermost first, then the functions the failing line calls (an assertion in a test names
    the function under test), within `budget_chars`: what a fix needs to see, as it is now."""
    repo = repo_map or build_map(root)
    room = _Room(budget_chars)
    parts: list[str] = []
    seen: set[tuple[str, int, int]] = set()

    def show(path: str, lines: list[str], span: tuple[int, int, str]) -> None:
        region = _fitting(path, lines, *span, room)
        if region is not None and (path, region.start, region.end) not in seen:
            seen.add((path, region.start, region.end))
            parts.append(room.take(region.render()))

    called: list[str] = []
    for path, line, innermost in reversed(frames(repo, report)):
        lines = read_lines(root, path)
        if lines is None:
            continue
        show(path, lines, frame_span(file_symbols(path, lines), line))
        if innermost and 0 < line <= len(lines):
            called = named_identifiers(lines[line - 1])
    definitions = repo.defining_any(called)
    for name in called[:MAX_CALLED]:
        for path, symbol in definitions.get(name, [])[:1]:
            lines = read_lines(root, path)
            current = find(file_symbols(path, lines), symbol.name) if lines else None
            if lines and current is not None:
                start, end, label = symbol_span(current)
                show(path, lines, (start, end, f"{label}, called on the failing line"))
    return "\n\n".join(parts)
