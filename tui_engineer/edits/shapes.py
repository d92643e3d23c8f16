"""The shape of a model reply: which kinds of edit it holds and how it departs from the canonical
layout (docs/protocol.md, "Reply shapes"). Recorded with every applied or refused reply, so a
bench can count per model how often replies were well-formed and in which shape.

Also the feedback for the one shape that is refused though it parses: a file shown in a fence
with no edit markers ("here is the updated calc.py"). A fence alone may hold the whole file or
only the part that changed; applying it as the whole file would delete the rest in the second
case, so it is never guessed at."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_engineer.edits.parser import (
    FILE_END_LINE,
    FILE_START_LINE,
    clean_path,
    parse_reply,
    path_in_fence_info,
    path_in_prose,
)
from tui_engineer.edits.types import EditError

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_MARKERS = {
    "search-replace": re.compile(r"^\s*<{5,9} *SEARCH\s*$", re.MULTILINE),
    "whole-file": re.compile(r"^\s*<{5,9} *FILE\s*$", re.MULTILINE),
    "file-ops": re.compile(r"^\s*<{5,9} *(DELETE|RENAME)\b", re.MULTILINE),
    "unified-diff": re.compile(r"^--- \S.*\n\+\+\+ \S", re.MULTILINE),
}
# A bare file name in prose ("Here is the updated calc.py:"): only to name it in feedback.
_BARE_PATH = re.compile(r"(?<![\w/.])([\w-]+(?:/[\w.-]+)*\.[A-Za-z0-9]{1,8})(?![\w/])")
_ACTIONS = re.compile(r"^\s*<{5,9} *(INSTALL|SETUP)\b", re.MULTILINE)


@dataclass(frozen=True)
class ReplyShape:
    """`kind`: the edits' kinds joined by "+" (search-replace, whole-file, file-ops,
    unified-diff), or for a reply without edits: actions, fenced-code (code in a fence, no
    markers) or prose. `details`: departures from the canonical layout (path-in-fence,
    path-decorated, path-in-prose, path-in-info, several-files-per-fence, crlf) and
    `malformed` when the reply did not parse."""

    kind: str
    details: tuple[str, ...] = ()


def _no_edit_kind(reply: str) -> str:
    if _ACTIONS.search(reply):
        return "actions"
    return "fenced-code" if any(_FENCE.match(line) for line in reply.splitlines()) else "prose"


def describe_reply(reply: str) -> ReplyShape:
    crlf = ("crlf",) if "\r\n" in reply else ()
    try:
        parsed = parse_reply(reply, max_reply_bytes=len(reply.encode("utf-8", "replace")) + 1)
    except EditError:
        kinds = sorted(k for k, pattern in _MARKERS.items() if pattern.search(reply))
        return ReplyShape("+".join(kinds) or _no_edit_kind(reply), (*crlf, "malformed"))
    if not parsed.edits:
        return ReplyShape(_no_edit_kind(reply), crlf)
    return ReplyShape("+".join(sorted(parsed.kinds)), tuple(sorted(parsed.variants)))


def _fence_label(lines: list[str], at: int) -> str | None:
    """The file a fence opening on line `at` is labelled with: on the fence, on the line
    above, or as the first line inside."""
    above = next((lines[k] for k in range(at - 1, -1, -1) if lines[k].strip()), "")
    inside = lines[at + 1] if at + 1 < len(lines) else ""
    bare = set(_BARE_PATH.findall(above))
    for found in (path_in_fence_info(lines[at]), clean_path(above), path_in_prose(above),
                  clean_path(inside), bare.pop() if len(bare) == 1 else None):  # fmt: skip
        if found and ("." in found or "/" in found):
            return found
    return None


def unmarked_files(reply: str) -> list[str]:
    """Files the reply shows in fences without any edit marker, in order."""
    lines = reply.replace("\r\n", "\n").split("\n")
    named, inside = [], False
    for at, line in enumerate(lines):
        if not _FENCE.match(line):
            continue
        if not inside and (path := _fence_label(lines, at)) and path not in named:
            named.append(path)
        inside = not inside
    return named


def unmarked_file_feedback(reply: str) -> str | None:
    """What to tell the model when its reply shows files in fences but holds no edit, or None
    when it shows none (the general no-edits message fits)."""
    files = unmarked_files(reply)
    if not files:
        return None
    shown = ", ".join(f"`{f}`" for f in files)
    example = files[0]
    return (
        f"Your reply shows {shown} in a fenced block without edit markers, so nothing was "
        "applied: a fenced block alone may be the whole file or only part of it, and taking it "
        "for the whole file would delete the rest. To replace a whole file, send its complete "
        f"content as a FILE block:\n\n{example}\n```\n{FILE_START_LINE}\n(every line of the "
        f"file)\n{FILE_END_LINE}\n```\n\nTo change some lines, send SEARCH/REPLACE blocks: the "
        "path line, then `<<<<<<< SEARCH`, the lines as they are now, `=======`, the new "
        "lines, `>>>>>>> REPLACE`."
    )
