"""A model reply's prose, without its raw SEARCH/REPLACE blocks: what a front end shows of a
reply while the edits themselves are shown as a diff (the TUI's chat, an editor over ACP)."""

from __future__ import annotations

import re

FENCE = re.compile(r"^\s*(```|~~~)")
_SEARCH = re.compile(r"^\s*<{5,9} SEARCH\s*$")


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
            if FENCE.match(line):
                self._in_block = False
            return ""
        if self._held and FENCE.match(self._held[-1]) and _SEARCH.match(line):
            self._held, self._in_block = [], True  # an edit block: drop it, fence and path
            return ""
        if FENCE.match(line):
            out = "".join(h for h in self._held if not FENCE.match(h))
            self._held = [h for h in self._held if not FENCE.match(h)][-1:] + [line]
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
