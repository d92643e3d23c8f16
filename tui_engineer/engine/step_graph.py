"""The plan as a graph: each step's dependencies, from what the plan says (`depends_on`) and
from the files steps change and read. A step that reads or changes a file an earlier step
changes depends on it; a step that names no file at all cannot be placed, so it depends on
every step before it (today's order, kept for plans that say nothing). The edges travel in
`plan_ready` (StepInfo.after) and decide which step may be prepared while another is reviewed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence


def _names(paths: Iterable[str]) -> set[str]:
    return {p.strip().lstrip("./") for p in paths if p.strip()}


def dependencies(steps: Sequence[object], *, unplaced: bool = True) -> dict[int, tuple[int, ...]]:
    """Each step's index -> the earlier steps it waits for, in order. `steps`: the plan's Steps
    or StepInfos (index, files, reads, depends_on). `unplaced` False leaves out what is only
    assumed (a step naming no file waiting for all): the dependencies that are certain."""
    found: dict[int, tuple[int, ...]] = {}
    earlier: list[tuple[int, set[str]]] = []  # (index, files it changes)
    for step in steps:
        index: int = step.index  # type: ignore[attr-defined]
        writes = _names(getattr(step, "files", ()))
        touched = writes | _names(getattr(step, "reads", ()))
        after = set(getattr(step, "depends_on", ()))
        for before, changed in earlier:
            assumed = not touched or not changed
            if (assumed and unplaced) or changed & touched:
                after.add(before)
        found[index] = tuple(sorted(after))
        earlier.append((index, writes))
    return found


def waiting_on(after: Sequence[int], status: Mapping[int, str]) -> list[int]:
    """Those of `after` not yet accepted (a step that was skipped counts as done)."""
    return [i for i in after if status.get(i, "accepted") not in ("accepted", "skipped")]


def dependants(steps: Sequence[object], index: int) -> list[int]:
    """The later steps that certainly need step `index` (they name it, or read or change what
    it changes), directly or through one another: dropped when it is skipped."""
    needs = dependencies(steps, unplaced=False)
    gone = {index}
    for later in sorted(needs):
        if later > index and gone & set(needs[later]):
            gone.add(later)
    return sorted(gone - {index})
