"""What the chat shows of a model reply: its prose, without the raw SEARCH/REPLACE blocks (the
diff pane shows the edits, and the chat gets one "edited `calc.py` (+4 −1)" line per apply),
with bare file paths set as code so Markdown does not turn `__init__` into bold."""

from __future__ import annotations

import re

from tui_engineer.names import readable

_FENCE = re.compile(r"^\s*(```|~~~)")
_SEARCH = re.compile(r"^\s*<{5,9} SEARCH\s*$")
# A word made only of path characters, with a slash, a dunder or a known extension. Checked
# per word with simple patterns: no nested quantifiers over a whole streamed line.
_PATH_CHARS = re.compile(r"[\w./-]+")
_EXTENSION = re.compile(r"\.(py|md|toml|txt|json|js|ts|rs|cfg|ini|yaml|yml|lock)$")
_TRAILING = ".,:;)!?"


class EditBlockFilter:
    """Fed streamed text, returns what to show: complete lines only, with every fenced block
    that holds a SEARCH marker (and the path line before it) left out."""

    def __init__(self) -> None:
        self._partial = ""
        self._held: list[str] = []  # a path line and/or a fence line, until we know more
        self._in_block = False

    def feed(self, text: str) -> str:
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        return "".join(self._line(line + "\n") for line in lines)

    def finish(self) -> str:
        rest = self._line(self._partial) if self._partial else ""
        self._partial = ""
        held, self._held = "".join(self._held), []
        return rest + ("" if self._in_block else held)

    def _line(self, line: str) -> str:
        if self._in_block:
            if _FENCE.match(line):
                self._in_block = False
            return ""
        if self._held and _FENCE.match(self._held[-1]) and _SEARCH.match(line):
            self._held, self._in_block = [], True  # an edit block: drop it, fence and path
            return ""
        if _FENCE.match(line):
            out = "".join(h for h in self._held if not _FENCE.match(h))
            self._held = [h for h in self._held if not _FENCE.match(h)][-1:] + [line]
            return out if len(self._held) == 1 else ""
        out = "".join(self._held)
        if _looks_like_path_line(line):
            self._held = [line]
            return out
        self._held = []
        return out + line


def _looks_like_path_line(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and " " not in stripped and ("/" in stripped or "." in stripped)


def code_paths(text: str) -> str:
    """Bare file paths outside code spans and fences set as `code`."""
    out, in_fence = [], False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_fence = not in_fence
            out.append(line)
            continue
        if in_fence:
            out.append(line)
            continue
        parts = line.split("`")
        for i in range(0, len(parts), 2):  # even parts are outside code spans
            parts[i] = re.sub(r"\S+", _code_if_path, parts[i])
        out.append("`".join(parts))
    return "".join(out)


def _code_if_path(match: re.Match[str]) -> str:
    word = match.group(0)
    core = word.rstrip(_TRAILING)
    tail = word[len(core) :]
    is_path = _PATH_CHARS.fullmatch(core) is not None and (
        "/" in core.strip("/.") or "__" in core or _EXTENSION.search(core) is not None
    )
    return f"`{core}`{tail}" if is_path and not core.startswith(("/", "-")) else word


def edited_line(files: list[tuple[str, int, int]]) -> str:
    """'edited [`calc.py`](diff:calc.py) (+4 −1), …': each path links to its part of the diff."""
    parts = [
        f"[`{readable(path)}`](diff:{readable(path)}) (+{added} −{removed})"
        for path, added, removed in files
    ]
    return "edited " + ", ".join(parts)
