"""What the chat shows of a model reply: its prose, without the raw SEARCH/REPLACE blocks (the
diff pane shows the edits, and the chat gets one "edited `calc.py` (+4 −1)" line per apply),
with bare file paths set as code so Markdown does not turn `__init__` into bold."""

from __future__ import annotations

import re

from tui_engineer.base.names import readable
from tui_engineer.edits.prose import FENCE

# A word made only of path characters, with a slash, a dunder or a known extension. Checked
# per word with simple patterns: no nested quantifiers over a whole streamed line.
_PATH_CHARS = re.compile(r"[\w./-]+")
_EXTENSION = re.compile(r"\.(py|md|toml|txt|json|js|ts|rs|cfg|ini|yaml|yml|lock)$")
_TRAILING = ".,:;)!?"


def code_paths(text: str) -> str:
    """Bare file paths outside code spans and fences set as `code`."""
    out, in_fence = [], False
    for line in text.splitlines(keepends=True):
        if FENCE.match(line):
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
