"""`tui-engineer run`'s per-hunk review (the `p` answer), in the style of `git add -p`: each
hunk shown in turn, kept or dropped (with an optional reason); the engine then tests the kept
ones and commits them only if they pass. Then each file the step's test runs wrote, left out
unless kept."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable

from tui_engineer.base.names import readable
from tui_engineer.engine.reviews.hunks import WHOLE_FILE, Unit, units
from tui_engineer.engine.reviews.review import WRITTEN_BY_TESTS, Decision, DroppedHunk, Proposal
from tui_engineer.headless.printer import visible

HUNK_HELP = (
    "y - keep this hunk\n"
    "n - drop this hunk (you may say why)\n"
    "a - keep this hunk and all the rest\n"
    "d - drop this hunk and all the rest\n"
    "q - back to the step's question, nothing decided"
)
Prompt = Callable[[str], Awaitable[str | None]]


async def per_hunk(proposal: Proposal, ask: Prompt, show: Callable[[str], None]) -> Decision | None:
    """Ask hunk by hunk; None to go back to the step's question (q, or everything dropped)."""
    found = units(proposal.diff)
    dropped: list[DroppedHunk] = []
    rest: str | None = None  # "a" or "d": the answer for every hunk after this one
    for number, unit in enumerate(found, 1):
        answer = rest or await _ask_one(unit, number, len(found), ask, show)
        if answer is None or answer == "q":
            return None
        if answer in {"a", "d"}:
            rest = answer
        if answer in {"n", "d"}:
            why = "" if rest else (await ask("Why drop it? (optional, the model sees it) ") or "")
            dropped.append(DroppedHunk(unit.ref.path, unit.ref.index, unit.text, why.strip()))
    if found and len(dropped) == len(found):
        show("Every hunk dropped: nothing to accept (skip or reject the step instead).")
        return None
    kept = await _kept_written(proposal, ask, show)
    if kept is None:
        return None
    if dropped:
        show(f"Keeping {len(found) - len(dropped)} of {len(found)} hunks: testing them again.")
    return Decision("accept", dropped=tuple(dropped), kept_written=kept)


async def _kept_written(
    proposal: Proposal, ask: Prompt, show: Callable[[str], None]
) -> tuple[str, ...] | None:
    """Of the files the step's test runs wrote, those to commit too (none unless said)."""
    kept: list[str] = []
    for _status, path in proposal.written:
        name = visible(readable(path))
        answer = await ask(f"Commit {name} too ({WRITTEN_BY_TESTS}) [y,N,q]? ")
        if answer is None or answer.strip().lower()[:1] == "q":
            return None
        if answer.strip().lower()[:1] == "y":
            kept.append(path)
    if kept:
        show(f"Committing too, {WRITTEN_BY_TESTS}: {', '.join(map(readable, kept))}.")
    return tuple(kept)


async def _ask_one(
    unit: Unit, number: int, total: int, ask: Prompt, show: Callable[[str], None]
) -> str | None:
    path = visible(readable(unit.ref.path))
    what = "this change" if unit.ref.index == WHOLE_FILE else "this hunk"
    show(f"--- {path} ({number}/{total})")
    show(visible(readable(unit.text.rstrip("\n"))))
    while True:
        answer = await ask(f"Keep {what} of {path} [y,n,a,d,q,?]? ")
        if answer is None:
            return None
        answer = answer.strip().lower()[:1]
        if answer in {"y", "n", "a", "d", "q"}:
            return answer
        print(HUNK_HELP, file=sys.stderr)
