"""The plan as a graph: each step's dependencies, from what the plan says (`depends_on`) and
from the files steps change and read. A step that reads or changes a file an earlier step
changes depends on it; a step that names no file at all cannot be placed, so it depends on
every step before it (today's order, kept for plans that say nothing). The edges travel in
`plan_ready` (StepInfo.after) and decide which step may be prepared while another is reviewed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def _names(paths: Iterable[str]) -> set[str]:
    return {p.strip().removeprefix("./") for p in paths if p.strip()}


def dependencies(
    steps: Sequence[object], *, needs_only: bool = False
) -> dict[int, tuple[int, ...]]:
    """Each step's index -> the earlier steps it waits for, in order. `steps`: the plan's Steps
    or StepInfos (index, files, reads, depends_on). With `needs_only`, only what a step needs
    to exist: the steps it names and those changing what it reads. Not two steps changing one
    file (they only take turns: "add sub" and "add mul" to calc.py), nor what is assumed of a
    step naming no file."""
    found: dict[int, tuple[int, ...]] = {}
    earlier: list[tuple[int, set[str]]] = []  # (index, files it changes)
    for step in steps:
        index: int = step.index  # type: ignore[attr-defined]
        writes = _names(getattr(step, "files", ()))
        reads = _names(getattr(step, "reads", ()))
        touched = writes | reads
        after = set(getattr(step, "depends_on", ()))
        for before, changed in earlier:
            if needs_only:
                takes = bool(changed & reads)
            else:
                takes = not touched or not changed or bool(changed & touched)
            if takes:
                after.add(before)
        found[index] = tuple(sorted(after))
        earlier.append((index, writes))
    return found


def waiting_on(after: Sequence[int], status: Mapping[int, str]) -> list[int]:
    """Those of `after` not yet accepted (a step that was skipped counts as done)."""
    return [i for i in after if status.get(i, "accepted") not in ("accepted", "skipped")]


def dependants(steps: Sequence[object], index: int) -> list[int]:
    """The later steps that need step `index` (they name it, or read what it changes),
    directly or through one another: dropped when it is skipped."""
    needs = dependencies(steps, needs_only=True)
    gone = {index}
    for later in sorted(needs):
        if later > index and gone & set(needs[later]):
            gone.add(later)
    return sorted(gone - {index})
