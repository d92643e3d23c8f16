"""The edit protocol: the edits a model reply can hold, the errors fed back to the model, and the
parser that turns a reply into edits. The grammar is documented in docs/protocol.md; keep the two
in step."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_engineer.edits.types import (
    ApplyFailed,
    DeleteFile,
    Edit,
    EditError,
    ParseError,
    RenameFile,
    ReplyTooLarge,
    SearchReplace,
    UnsafePath,
    WriteFile,
)
from tui_engineer.edits.udiff import read_file_diff, read_hunks, starts_diff, starts_hunk

__all__ = [
    "ApplyFailed", "DeleteFile", "Edit", "EditError", "ParseError", "RenameFile", "ReplyTooLarge",
    "SearchReplace", "UnsafePath", "WriteFile", "clean_path", "parse_edits", "parse_reply",
]  # fmt: skip

MAX_REPLY_BYTES = 512_000


# Markers: five to nine angle brackets / equals signs (seven is canonical), spaces around allowed.
_SEARCH = re.compile(r"^<{5,9} *(?:SEARCH|ORIGINAL)$")  # ORIGINAL/UPDATED: aider's old words
_DIVIDER = re.compile(r"^={5,9}$")
_REPLACE = re.compile(r"^>{5,9} *(?:REPLACE|UPDATED)$")
_FILE_START = re.compile(r"^<{5,9} *FILE$")
_FILE_END = re.compile(r"^>{5,9} *FILE$")
_DELETE = re.compile(r"^<{5,9} *DELETE(?:\s+(?P<path>.*))?$")
_RENAME = re.compile(r"^<{5,9} *RENAME(?:\s+(?P<rest>.*))?$")
_OPENERS = (_SEARCH, _FILE_START, _DELETE, _RENAME)
_FENCE = re.compile(r"^(`{3,}|~{3,})[^`]*$")
_HEADING = re.compile(r"^#{1,6}\s+")
_LABEL = re.compile(r"^(?:file|filename|file name|path)\s*:\s*", re.IGNORECASE)
_SPAN = re.compile(r"\*\*`?([^*`\s]+)`?\*\*|`([^`\s]+)`")

SEARCH_LINE = "<<<<<<< SEARCH"
DIVIDER_LINE = "======="
REPLACE_LINE = ">>>>>>> REPLACE"
FILE_START_LINE = "<<<<<<< FILE"
FILE_END_LINE = ">>>>>>> FILE"


def clean_path(raw: str) -> str | None:
    """The path written on a path line, or None when the line does not look like one.

    Tolerated around the path: spaces, `**bold**`, `backticks`, a trailing colon, a leading "./".
    A bare path may not contain spaces (that is prose); a backticked one may."""
    text = _LABEL.sub("", _HEADING.sub("", raw.strip()))
    quoted = False
    for _ in range(3):  # decorations nest at most as **`path`:**
        text = text.removesuffix(":").strip()
        if len(text) > 4 and text.startswith("**") and text.endswith("**"):
            text = text[2:-2].strip()
        elif not quoted and len(text) > 2 and text.startswith("`") and text.endswith("`"):
            text, quoted = text[1:-1].strip(), True
    while text.startswith("./"):
        text = text[2:]
    if not text or "`" in text or _FENCE.match(text) or _is_marker(text):
        return None
    if not quoted and any(ch.isspace() for ch in text):
        return None
    return text


def _path_like(text: str | None) -> bool:
    return text is not None and ("." in text or "/" in text) and not text.endswith(".")


def path_in_prose(line: str) -> str | None:
    """The one file path a prose line names in backticks or bold ("Here is the updated
    `calc.py`:"), or None when it names none or several (which file is meant is unclear)."""
    found = {clean_path(a or b) for a, b in _SPAN.findall(line)}
    paths = [p for p in found if _path_like(p)]
    return paths[0] if len(paths) == 1 else None


def path_in_fence_info(line: str) -> str | None:
    """A path written on the opening fence itself: ```python calc.py, ```calc.py,
    ```python:calc.py, ```python title="calc.py"."""
    m = _FENCE.match(line.strip())
    if m is None:
        return None
    info = line.strip()[len(m.group(1)) :].replace(":", " ").replace("=", " ")
    words = [clean_path(w.strip("\"'")) for w in info.split()]
    paths = [w for w in words if _path_like(w)]
    return paths[0] if len(paths) == 1 else None


def _is_marker(line: str) -> bool:
    marks = (*_OPENERS, _DIVIDER, _REPLACE, _FILE_END)
    return any(m.match(line) for m in marks)


def _block_name(number: int, path: str | None) -> str:
    return f"Block {number}" + (f" ({path})" if path else "")


class _Parser:
    """One pass over the reply's lines; `i` is the index of the next unread line."""

    def __init__(self, reply: str) -> None:
        self.lines = reply.replace("\r\n", "\n").split("\n")
        self.i = 0
        self.edits: list[Edit] = []
        self.last_path: str | None = None  # path of the block that ended just above, if any
        self.last_end = -1  # line index of that block's end marker
        self.variants: set[str] = set()  # how the reply deviates from the canonical shape
        self.kinds: set[str] = set()  # the kinds of edit it holds

    def parse(self) -> list[Edit]:
        while self.i < len(self.lines):
            line = self.lines[self.i].strip()
            self.i += 1
            if starts_diff(self.lines, self.i - 1):
                self._diff()
            elif _FENCE.match(line) and starts_hunk(self._next_line()):
                self._fenced_hunks()
            elif _SEARCH.match(line):
                self._search_replace()
            elif _FILE_START.match(line):
                self._whole_file()
            elif m := _DELETE.match(line):
                self._delete(m.group("path") or "")
            elif m := _RENAME.match(line):
                self._rename(m.group("rest") or "")
            elif _REPLACE.match(line) or _FILE_END.match(line):
                number = len(self.edits) + 1
                raise ParseError(
                    f"Block {number}: found `{line}` without a matching opening marker "
                    f"(`{SEARCH_LINE}` or `{FILE_START_LINE}`) before it. Start every block with "
                    "its opening marker."
                )
        return self.edits

    # -- the path of a block -------------------------------------------------------------------

    def _prev_nonblank(self, before: int) -> int:
        j = before - 1
        while j >= 0 and not self.lines[j].strip():
            j -= 1
        return j

    def _block_path(self, marker_at: int, number: int) -> str:
        """The path for the block whose opening marker is on line `marker_at` (see the doc)."""
        j = self._prev_nonblank(marker_at)
        if j < 0:
            raise ParseError(self._no_path(number, None, ""))
        above = self.lines[j].strip()
        if j == self.last_end and self.last_path is not None:
            return self.last_path  # another block in the same fence, same file
        if _FENCE.match(above):
            k = self._prev_nonblank(j)
            line = self.lines[k] if k >= 0 and k != self.last_end else ""
            found = self._path_line(line) or self._note(path_in_fence_info(above), "info")
            if found is None:
                seen = self.lines[k].strip() if k >= 0 else None
                raise ParseError(self._no_path(number, seen, "the fence"))
            return found
        found = self._path_line(above)
        if found is None:
            raise ParseError(self._no_path(number, above, "the marker"))
        k = self._prev_nonblank(j)
        if k >= 0 and _FENCE.match(self.lines[k].strip()):
            self.variants.add("path-in-fence")
        elif self.last_end >= 0 and not any(
            _FENCE.match(self.lines[n].strip()) for n in range(self.last_end + 1, j)
        ):
            self.variants.add("several-files-per-fence")
        return found

    def _path_line(self, line: str) -> str | None:
        """A path line (noting a decorated one), else the one path a prose line names."""
        found = clean_path(line)
        if found is not None:
            if found != line.strip().removeprefix("./"):
                self.variants.add("path-decorated")
            return found
        return self._note(path_in_prose(line), "prose")

    def _note(self, path: str | None, where: str) -> str | None:
        if path is not None:
            self.variants.add(f"path-in-{where}")
        return path

    def _no_path(self, number: int, seen: str | None, what: str) -> str:
        where = f" The line above {what} is `{seen}`, which is not a file path." if seen else ""
        return (
            f"Block {number}: no file path for this block.{where} Put the file's path alone on "
            "the line just before the opening ``` fence (or as the first line inside the fence)."
        )

    # -- block bodies ----------------------------------------------------------------------------

    def _collect(self, ends: tuple[re.Pattern[str], ...]) -> tuple[list[str], str | None]:
        """Lines up to the first line matching one of `ends` (consumed) or an opening marker
        (not consumed). Returns (lines, the end line found or None)."""
        body: list[str] = []
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            line = raw.strip()
            if any(e.match(line) for e in ends):
                self.i += 1
                return body, line
            if any(o.match(line) for o in _OPENERS):
                return body, None
            body.append(raw)
            self.i += 1
        return body, None

    def _where_it_stopped(self) -> str:
        if self.i >= len(self.lines):
            return "the reply ended inside the block (was it cut off?)"
        return f"the next block's `{self.lines[self.i].strip()}` came first"

    def _search_replace(self) -> None:
        number = len(self.edits) + 1
        path = self._block_path(self.i - 1, number)
        name = _block_name(number, path)
        search, end = self._collect((_DIVIDER, _REPLACE))
        if end is None or _REPLACE.match(end):
            stop = "the REPLACE marker came first" if end else self._where_it_stopped()
            raise ParseError(
                f"{name}: missing the `{DIVIDER_LINE}` line that separates the SEARCH text "
                f"from the REPLACE text; {stop}. Write `{SEARCH_LINE}`, the lines to find, "
                f"`{DIVIDER_LINE}`, the new lines, then `{REPLACE_LINE}`."
            )
        replace, end = self._collect((_REPLACE,))
        if end is None:
            raise ParseError(
                f"{name}: missing the closing `{REPLACE_LINE}` line after the replacement "
                f"text; {self._where_it_stopped()}. End every block with `{REPLACE_LINE}`."
            )
        self._add(SearchReplace(path, _text(search), _text(replace)), path)

    def _whole_file(self) -> None:
        number = len(self.edits) + 1
        path = self._block_path(self.i - 1, number)
        content, end = self._collect((_FILE_END,))
        if end is None:
            raise ParseError(
                f"{_block_name(number, path)}: missing the closing `{FILE_END_LINE}` line after "
                f"the file's content; {self._where_it_stopped()}. End a whole-file block with "
                f"`{FILE_END_LINE}`."
            )
        self._add(WriteFile(path, _text(content)), path)

    def _delete(self, raw: str) -> None:
        path = clean_path(raw)
        if path is None:
            raise ParseError(
                f"Block {len(self.edits) + 1}: DELETE needs the path of the file on the same "
                "line, like `<<<<<<< DELETE path/to/file.py`."
            )
        self._add(DeleteFile(path), None)

    def _rename(self, rest: str) -> None:
        old, sep, new = rest.partition("->")
        old_path, new_path = clean_path(old), clean_path(new)
        if not sep or old_path is None or new_path is None:
            raise ParseError(
                f"Block {len(self.edits) + 1}: RENAME needs both paths on the same line, like "
                "`<<<<<<< RENAME old/path.py -> new/path.py`."
            )
        self._add(RenameFile(old_path, new_path), None)

    def _next_line(self) -> str:
        return self.lines[self.i] if self.i < len(self.lines) else ""

    def _fenced_hunks(self) -> None:
        """`@@` hunks with no ---/+++ lines, in a fence labelled with the file (above it or on
        it): the label says which file they change."""
        number = len(self.edits) + 1
        fence = self.lines[self.i - 1]
        k = self._prev_nonblank(self.i - 1)
        path = (self._path_line(self.lines[k]) if k >= 0 else None) or path_in_fence_info(fence)
        if path is None:
            raise ParseError(
                f"Block {number}: a diff hunk (`@@`) without the file it changes. Start a diff "
                "with the file's lines `--- a/path/to/file` and `+++ b/path/to/file`, or use "
                "SEARCH/REPLACE blocks."
            )
        edits, self.i = read_hunks(self.lines, self.i, path, number)
        self.kinds.add("unified-diff")
        self.edits.extend(edits)
        self.last_path, self.last_end = None, -1

    def _diff(self) -> None:
        edits, self.i = read_file_diff(self.lines, self.i - 1, len(self.edits) + 1)
        self.kinds.add("unified-diff")
        self.edits.extend(edits)
        self.last_path, self.last_end = None, -1

    def _add(self, edit: Edit, path: str | None) -> None:
        kind = {SearchReplace: "search-replace", WriteFile: "whole-file"}.get(type(edit))
        self.kinds.add(kind or "file-ops")
        self.edits.append(edit)
        self.last_path = path
        self.last_end = self.i - 1


def _text(lines: list[str]) -> str:
    """Block lines as text: every line newline-terminated; no lines is the empty string."""
    return "".join(f"{line}\n" for line in lines)


def check_reply_size(reply: str, max_reply_bytes: int) -> None:
    size = len(reply) if len(reply) > max_reply_bytes else len(reply.encode("utf-8", "replace"))
    if size > max_reply_bytes:
        raise ReplyTooLarge(
            f"Your reply is {size:,} bytes, over the {max_reply_bytes:,}-byte limit, so none of "
            "it was applied. Send smaller edits: SEARCH blocks holding only the lines that change "
            "plus a few lines of context, and fewer files per reply."
        )


@dataclass(frozen=True)
class ParsedReply:
    edits: list[Edit]
    kinds: frozenset[str]  # search-replace, whole-file, file-ops, unified-diff
    variants: frozenset[str]  # path-in-fence, path-decorated, path-in-prose, crlf, ...


def parse_reply(reply: str, *, max_reply_bytes: int = MAX_REPLY_BYTES) -> ParsedReply:
    """parse_edits, plus what the reply's shape was (edits/shapes.py records it)."""
    check_reply_size(reply, max_reply_bytes)
    parser = _Parser(reply)
    edits = parser.parse()
    variants = parser.variants | ({"crlf"} if "\r\n" in reply else set())
    return ParsedReply(edits, frozenset(parser.kinds), frozenset(variants))


def parse_edits(reply: str, *, max_reply_bytes: int = MAX_REPLY_BYTES) -> list[Edit]:
    """The edits in a model reply, in order; [] when it has none. Raises ParseError on a
    malformed block and ReplyTooLarge over the size cap."""
    return parse_reply(reply, max_reply_bytes=max_reply_bytes).edits
