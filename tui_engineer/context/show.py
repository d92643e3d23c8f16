"""SHOW requests: the model asks to see more of a file before it edits (docs/protocol.md).

A reply line `<<<<<<< SHOW path:120-260`, `SHOW path::name` or `SHOW path` asks for lines, a
class or function, or a file from its top. The answer is numbered lines, bounded in lines and in
characters (what the context window has room for); paths go through the same safety checks as
edits, and files git ignores (where secrets live) are refused."""

from __future__ import annotations

import difflib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.safe_git import shadow_git_full_env
from tui_engineer.context.regions import find
from tui_engineer.context.symbols import parse_symbols
from tui_engineer.edits.parser import UnsafePath
from tui_engineer.edits.paths import resolve_safe_path

MAX_REQUESTS = 8  # per reply; more are answered "ask again"
MAX_LINE_CHARS = 400  # a minified line is cut, so one line cannot eat the answer
MAX_FILE_BYTES = 2_000_000
MAX_SYMBOL_LINES = 400  # a symbol found by pattern (no parser) is cut there

_LINE = re.compile(r"^\s*(?P<marker><{5,9}\s*)?SHOW\b:?\s*(?P<spec>.+?)\s*$")
_SYMBOL = re.compile(r"^(?P<path>[^\s:#]+)\s*::\s*(?P<name>[A-Za-z_][\w.]*)$")
_RANGE = re.compile(
    r"^(?P<path>[^\s:#]+)\s*(?:[:#]\s*|\s+(?:lines?\s+)?)L?(?P<start>\d+)"
    r"(?:\s*(?:-|–|—|\.\.|to)\s*L?(?P<end>\d+))?$"
)
_PATH = re.compile(r"^[^\s:#]+$")
_WRAPPERS = ("`", "**", '"', "'")


@dataclass(frozen=True)
class ShowRequest:
    path: str
    start: int | None = None  # 1-based, inclusive
    end: int | None = None
    symbol: str | None = None
    malformed: bool = False  # the spec as written was not understood: `path` holds it

    @property
    def label(self) -> str:
        """The tidy form shown in the chat and the record: `more.py:4980-5060`."""
        if self.symbol:
            return f"{self.path}::{self.symbol}"
        if self.start is not None:
            return (
                f"{self.path}:{self.start}-{self.end}" if self.end else f"{self.path}:{self.start}"
            )
        return self.path


def _unwrap(spec: str) -> str:
    for _ in range(3):
        spec = spec.strip().rstrip(":").strip()
        for mark in _WRAPPERS:
            if len(spec) > 2 * len(mark) and spec.startswith(mark) and spec.endswith(mark):
                spec = spec[len(mark) : -len(mark)]
    return spec.strip()


def _parse_spec(spec: str) -> ShowRequest:
    spec = _unwrap(spec)
    spec = spec.removeprefix("./")
    if found := _SYMBOL.match(spec):
        return ShowRequest(found["path"], symbol=found["name"])
    if found := _RANGE.match(spec):
        start, end = int(found["start"]), found["end"] and int(found["end"])
        if end is not None and end < start:
            start, end = end, start
        return ShowRequest(found["path"], max(start, 1), end)
    if _PATH.match(spec):
        return ShowRequest(spec)
    return ShowRequest(spec, malformed=True)


def parse_show_requests(reply: str) -> list[ShowRequest]:
    """Every SHOW line of a reply, in order, without repeats. A SHOW line starts its line
    (after spaces or a `<<<<<<<` marker) and is upper case, so prose never matches. Without
    the marker the path must look like one (a `.` or `/` in it): `SHOW TABLES;` in a SQL
    snippet is not a request."""
    found: dict[str, ShowRequest] = {}
    for line in reply.replace("\r\n", "\n").split("\n"):
        match = _LINE.match(line)
        if not match:
            continue
        request = _parse_spec(match["spec"])
        if match["marker"] or (not request.malformed and any(c in request.path for c in "./")):
            found.setdefault(request.label, request)
    return list(found.values())


# ----- finding a symbol


_KEYWORDS = "def|class|function|fn|func|struct|interface|type|enum|impl|trait|module"
_DEFINITION = r"^\s*(?:export\s+|pub\s+)?(?:async\s+)?(?:" + _KEYWORDS + r")\s+{name}\b"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _other_symbol(lines: list[str], name: str) -> tuple[int, int] | None:
    """For languages without a parser here: from the definition line to the last line indented
    deeper than it (a closing `}` or `end` included), at most MAX_SYMBOL_LINES."""
    pattern = re.compile(_DEFINITION.format(name=re.escape(name.rsplit(".", 1)[-1])))
    for index, line in enumerate(lines):
        if not pattern.match(line):
            continue
        end = index
        for later in range(index + 1, min(len(lines), index + MAX_SYMBOL_LINES)):
            text = lines[later]
            if not text.strip():
                continue
            if _indent(text) <= _indent(line):
                end = later if text.strip().startswith(("}", "end")) else end
                break
            end = later
        return index + 1, end + 1
    return None


def find_symbol(path: str, text: str, name: str) -> tuple[tuple[int, int] | None, list[str]]:
    """The lines of class/function `name` (`Class.method` allowed), and the names known (for
    the model when the name is not found): the repository map's tree-sitter symbols, or a
    definition pattern for languages without a grammar here."""
    symbols = parse_symbols(path, text.encode("utf-8", "surrogateescape"))
    if symbols is None:
        return _other_symbol(text.splitlines(), name), []
    symbol = find(symbols, name)
    return ((symbol.line, symbol.end) if symbol else None), [s.name for s in symbols]


# ----- answering


@dataclass
class ShowAnswer:
    text: str
    shown: list[str] = field(default_factory=list)  # labels of what was shown, with real ranges
    refused: list[str] = field(default_factory=list)  # one line per request not shown, why
    lines: int = 0


def _is_ignored(root: Path, rel: str) -> bool:
    done = subprocess.run(
        ["git", "check-ignore", "-q", "--", rel],
        cwd=root,
        capture_output=True,
        check=False,
        env=shadow_git_full_env(),  # root is often a shadow
    )
    return done.returncode == 0


def _close_names(root: Path, rel: str) -> list[str]:
    from tui_engineer.context.files import list_repo_files

    names = list_repo_files(root, limit=20_000)
    by_name = [n for n in names if n.rsplit("/", 1)[-1] == rel.rsplit("/", 1)[-1]]
    return (by_name or difflib.get_close_matches(rel, names, n=3, cutoff=0.6))[:3]


def _read_lines(root: Path, request: ShowRequest) -> list[str] | str:
    """The file's lines, or why it cannot be shown."""
    try:
        target = resolve_safe_path(root, request.path)
    except UnsafePath as err:
        reason = str(err).split(": ", 1)[-1].split(". Nothing was changed", 1)[0]
        return f"refused — {reason}"
    rel = target.relative_to(root.resolve()).as_posix()
    if _is_ignored(root, rel):
        return "refused — the file is ignored by git (such files often hold secrets)"
    if not target.is_file():
        close = _close_names(root, request.path)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        return f"not shown — the file does not exist.{hint}"
    if target.stat().st_size > MAX_FILE_BYTES:
        return f"not shown — the file is over {MAX_FILE_BYTES:,} bytes"
    data = target.read_bytes()
    if b"\0" in data[:8192]:
        return "refused — it is a binary file"
    return data.decode("utf-8", "replace").splitlines()


def _span(request: ShowRequest, lines: list[str]) -> tuple[int, int] | str:
    total = len(lines)
    if request.symbol:
        span, known = find_symbol(request.path, "\n".join(lines), request.symbol)
        if span is None:
            names = f" Its classes and functions: {', '.join(known[:30])}." if known else ""
            return f"not shown — no class or function named `{request.symbol}` found.{names}"
        return span
    start = request.start or 1
    if start > total:
        return f"not shown — the file has only {total:,} lines"
    return start, min(request.end or total, total)


class _Room:
    """What is left of one answer's line and character limits."""

    def __init__(self, lines: int, chars: int) -> None:
        self.lines, self.chars = lines, chars

    def take(self, text: str) -> bool:
        if self.lines <= 0 or len(text) + 1 > self.chars:
            return False
        self.lines -= 1
        self.chars -= len(text) + 1
        return True


def _numbered(lines: list[str], start: int, end: int, room: _Room) -> tuple[list[str], int]:
    """Numbered lines start..end while the room lasts; the last line number shown."""
    out: list[str] = []
    width = len(str(end))
    last = start - 1
    for number in range(start, end + 1):
        text = lines[number - 1]
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " …(line cut)"
        row = f"{number:>{width}} | {text}"
        if not room.take(row):
            break
        out.append(row)
        last = number
    return out, last


def _one(root: Path, request: ShowRequest, room: _Room, max_lines: int) -> tuple[str, str, int]:
    """(text for the model, label shown or '' when refused, lines shown)."""
    asked = f"SHOW {request.label}"
    if request.malformed:
        forms = "`SHOW path`, `SHOW path:120-260` or `SHOW path::name`"
        return f"{asked}: not understood — write {forms}.", "", 0
    lines = _read_lines(root, request)
    if isinstance(lines, str):
        return f"{asked}: {lines}", "", 0
    span = _span(request, lines)
    if isinstance(span, str):
        return f"{asked}: {span}", "", 0
    start, end = span
    rows, last = _numbered(lines, start, end, room)
    if not rows:
        full = "no room left in this answer (the context window is nearly full, or the line limit"
        return f"{asked}: not shown — {full} is used up); edit with what you have.", "", 0
    total = len(lines)
    where = f"{request.path} lines {start}-{last} of {total}"
    if request.symbol:
        where = f"{request.path}::{request.symbol} (lines {start}-{last} of {total})"
    parts = [f"{where}:", "```", *rows, "```"]
    if last < end:
        why = "what fits in the context window"
        if room.lines <= 0:
            why = f"the {max_lines}-line limit per answer"
        parts.append(
            f"(Cut at line {last}: {why}. Ask `SHOW {request.path}:{last + 1}-{end}` "
            "for the rest if you need it.)"
        )
    return "\n".join(parts), f"{request.path}:{start}-{last}", len(rows)


def answer_show(
    root: Path, requests: list[ShowRequest], *, max_lines: int, max_chars: int
) -> ShowAnswer:
    """The answer to one round of SHOW requests, within `max_lines` lines and `max_chars`
    characters in all."""
    answer = ShowAnswer(text="")
    room = _Room(max_lines, max_chars)
    parts: list[str] = []
    for index, request in enumerate(requests):
        if index >= MAX_REQUESTS:
            parts.append(f"SHOW {request.label}: not shown — at most {MAX_REQUESTS} per reply.")
            answer.refused.append(f"{request.label}: over {MAX_REQUESTS} requests")
            continue
        text, shown, count = _one(root, request, room, max_lines)
        parts.append(text)
        if shown:
            answer.shown.append(shown)
            answer.lines += count
        else:
            answer.refused.append(text.removeprefix("SHOW "))
    answer.text = "\n\n".join(parts)
    return answer
