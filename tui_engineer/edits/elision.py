"""Lines standing for code left out ("...", "# ... rest unchanged", "// ... existing code ...").

Models write them in SEARCH (lines to find that are not in the file) and in REPLACE or whole
files (where writing them would delete the code they stand for). Neither is applied: the
feedback says why and what to send instead."""

from __future__ import annotations

import re
from collections.abc import Sequence

# A bare ellipsis, a comment starting with one, or a comment with one that says code is kept.
_COMMENT = r"(?:#|//|/\*|--|<!--|;)"
_DOTS = r"(?:\.\.\.|…)"
_SAYS_KEPT = r"\b(?:rest|existing|unchanged|remaining|same|other)\b"
_ELISION = re.compile(
    rf"^{_DOTS}$|^{_COMMENT}\s*{_DOTS}|^{_COMMENT}.*{_SAYS_KEPT}.*{_DOTS}|^{_COMMENT}.*{_DOTS}.*{_SAYS_KEPT}",
    re.IGNORECASE,
)


def is_elision(line: str) -> bool:
    return bool(_ELISION.match(line.strip()))


def comment_elisions(lines: Sequence[str], known: Sequence[str]) -> list[str]:
    """Comment elisions in `lines` that are not lines of `known` (the file, or SEARCH): writing
    them would replace real code by a placeholder. A bare `...` is left alone (Python's
    Ellipsis is a real statement)."""
    present = {line.strip() for line in known}
    return [
        line.strip()
        for line in lines
        if is_elision(line) and line.strip() not in ("...", "…") and line.strip() not in present
    ]


# In each refusal for a placeholder: how the bench counts such replies (aider's lazy_comments).
_LEFT_OUT = ("which stands for lines left out", "a placeholder for code left out")

ELIDED_SEARCH = (
    "SEARCH holds `{line}`, which stands for lines left out; SEARCH must repeat the file's lines "
    "exactly, every one of them (a `...` is only taken as 'the lines between stay' when REPLACE "
    "has the same `...` lines and each piece between them matches exactly one place of the "
    "file, in order). Make SEARCH shorter instead: only the lines that change plus two or "
    "three unchanged lines around them, copied exactly, one block per place that changes."
)

ELIDED_REPLACE = (
    "{what} holds `{line}`, a placeholder for code left out. Written as it is, it would replace "
    "that code, deleting it. Write the code out in full, or use SEARCH/REPLACE blocks that "
    "hold only the lines that change."
)


def is_elision_refusal(feedback: str) -> bool:
    """The feedback of an edit refused for a line standing for code left out."""
    return any(mark in feedback for mark in _LEFT_OUT)


Piece = tuple[list[str], list[str]]


def _pieces(lines: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    """`lines` cut at their elision lines: the pieces between, and the elision lines."""
    pieces: list[list[str]] = [[]]
    cuts: list[str] = []
    for line in lines:
        if is_elision(line):
            cuts.append(line.strip())
            pieces.append([])
        else:
            pieces[-1].append(line)
    return pieces, cuts


def elided_pieces(search: Sequence[str], replace: Sequence[str]) -> list[Piece] | None:
    """SEARCH and REPLACE cut at the same elision lines, piece for piece ("keep what is between
    as it is"), or None when they do not line up that way (then the elision's meaning is not
    clear and the block is refused)."""
    found, cuts = _pieces(search)
    wanted, replace_cuts = _pieces(replace)
    if not cuts or cuts != replace_cuts:
        return None
    pairs = list(zip(found, wanted, strict=True))
    for old, new in pairs:
        if not any(line.strip() for line in old) and any(line.strip() for line in new):
            return None  # lines added beside an elision: where exactly?
    return [(old, new) for old, new in pairs if any(line.strip() for line in old)]
