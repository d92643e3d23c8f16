"""Why a SEARCH did not apply, told so the model can retry: the closest lines of the file (with
line numbers, ready to copy) and whether the replacement is already there."""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

MAX_CANDIDATES = 400  # windows scored with difflib; bounded so a big file stays fast
MIN_RATIO = 0.4  # below this the "closest" lines are noise, not a hint
MAX_SHOWN = 40


def _anchored_starts(lines: Sequence[str], search: Sequence[str]) -> list[int]:
    """Window starts where at least one search line lines up with an equal file line, most
    aligned lines first."""
    positions: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line.strip():
            positions.setdefault(line.strip(), []).append(i)
    votes: dict[int, int] = {}
    for k, line in enumerate(search):
        for i in positions.get(line.strip(), ()) if line.strip() else ():
            start = max(0, min(i - k, len(lines) - len(search)))
            votes[start] = votes.get(start, 0) + 1
    return sorted(votes, key=lambda s: (-votes[s], s))


def _candidate_starts(lines: Sequence[str], search: Sequence[str]) -> list[int]:
    last = max(0, len(lines) - len(search))
    anchored = _anchored_starts(lines, search)
    if anchored:
        return anchored[:MAX_CANDIDATES]
    stride = max(1, (last + 1) // MAX_CANDIDATES)
    return list(range(0, last + 1, stride))


def closest_lines(lines: Sequence[str], search: Sequence[str]) -> tuple[int, int] | None:
    """(start, end) of the window of `lines` most like `search`, or None if nothing is close."""
    if not lines or not search:
        return None
    wanted = "\n".join(s.strip() for s in search)
    best: tuple[float, int] | None = None
    for start in _candidate_starts(lines, search):
        window = lines[start : start + len(search)]
        matcher = SequenceMatcher(None, "\n".join(w.strip() for w in window), wanted, False)
        if best is not None and matcher.quick_ratio() <= best[0]:
            continue
        ratio = matcher.ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start)
    if best is None or best[0] < MIN_RATIO:
        return None
    start = best[1]
    return start, min(len(lines), start + len(search))


def numbered(lines: Sequence[str], start: int, end: int) -> str:
    """Lines [start, end) with 1-based line numbers, capped at MAX_SHOWN lines."""
    width = len(str(end))
    shown = [f"{i + 1:>{width}} | {lines[i]}" for i in range(start, min(end, start + MAX_SHOWN))]
    if end - start > MAX_SHOWN:
        shown.append(f"{'':>{width}} | ... ({end - start - MAX_SHOWN} more lines)")
    return "\n".join(shown)


def not_found_feedback(
    name: str, rel: str, lines: Sequence[str], search: Sequence[str], already_at: int | None
) -> str:
    """The text for a SEARCH that matches nothing in `rel` (whose current lines are `lines`)."""
    parts = [
        f"{name}: the SEARCH text was not found in {rel}. SEARCH must repeat lines of the file "
        "exactly as they are now (only a uniform indentation difference is tolerated)."
    ]
    if already_at is not None:
        parts.append(
            f"The REPLACE text of this block is already present in {rel} at line {already_at + 1}:"
            " the edit may already be applied. If it is, leave this block out."
        )
    window = closest_lines(lines, search)
    if window is not None:
        start, end = window
        span = f"line {end}" if end - start == 1 else f"lines {start + 1}-{end}"
        parts.append(
            f"The closest lines in {rel} are {span}:\n"
            f"{numbered(lines, start, end)}\n"
            "If you meant these, copy them exactly (without the line numbers) into SEARCH."
        )
    else:
        parts.append(f"Nothing in {rel} resembles it; check the file name and its current content.")
    return "\n\n".join(parts)
