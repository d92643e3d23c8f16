"""A prepared step moved onto the files it now lands on, and tested again there.

A step prepared ahead (pipeline.py) was built on the files of the step before it as they were
then. When what it lands on differs (a fix, a hand edit, hunks left out, an earlier step
accepted or rejected since), its proposal is moved there with a three-way merge
(engine/ahead/stacked.py `restack`) and tested there, the affected tests then the full suite,
before it is shown: the step reviewed next is moved onto the proposal under review while the
human reads it (`move_early`, so that an accept of it as it is shows that step at once), and
again at its turn if what it lands on changed meanwhile (`restacked`). A conflict, or tests
that fail there, make it be proposed again (said).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tui_engineer.engine import events as ev
from tui_engineer.engine.ahead.prepared import Ahead, prepare_failed
from tui_engineer.engine.ahead.stacked import pending_commit, restack
from tui_engineer.engine.reviews.review import Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.verification import verify_attempt


class NotRestacked(Exception):
    """A prepared step could not be moved onto the tree it now lands on (said why)."""


async def move_early(rt: Runtime, ahead: Ahead, tree: str) -> None:
    """`ahead`, the step reviewed next, prepared on other files than `tree` (the proposal under
    review's): moved onto them now, and tested there, while the human reads."""
    if ahead.tree == tree or ahead.task is None or ahead.shadow is None:
        return
    if prepare_failed(ahead.task) or ahead.restacking:
        return
    base = (await asyncio.to_thread(pending_commit, rt.shadow))[0]  # of `tree`
    if ahead.rt is not None:
        ahead.rt.next_up = True
    before = ahead.task
    ahead.restacking = True

    async def moved() -> Proposal:
        try:
            proposal = await before
            return await restacked(rt, ahead, proposal, base, tree)
        finally:
            ahead.restacking = False

    ahead.task = asyncio.create_task(moved())


async def restacked(
    rt: Runtime, ahead: Ahead, proposal: Proposal, base: str, tree: str
) -> Proposal:
    """`ahead`'s proposal moved onto `base` (whose files are `tree`) and tested there: the
    affected tests, then the full suite. A conflict, or tests that fail there, raise
    NotRestacked: the step is proposed again when its turn comes."""
    index = ahead.step.index
    assert ahead.shadow is not None and ahead.rt is not None
    moved = await asyncio.to_thread(restack, ahead.shadow, ahead.base, base, rt.shadow)
    if not moved:
        raise _not_restacked(rt, ahead, "its changes conflict with the files it lands on")
    ahead.base, ahead.tree = base, tree
    # Said when its turn comes (held until then), before its test runs there.
    ahead.held(ev.Notice(message=f"Step {index} was prepared on other files: moved onto "
                         "the new ones and tested again there."))  # fmt: skip
    diff = await asyncio.to_thread(ahead.shadow.diff)
    if rt.options.unverified:
        return replace(proposal, diff=diff)
    verified = await verify_attempt(ahead.rt, index)
    again = replace(proposal, diff=diff, report=verified.report, test_runs=verified.summaries())
    if not again.tests_ok:
        raise _not_restacked(rt, ahead, "its tests fail on the files it lands on")
    return again


def _not_restacked(rt: Runtime, ahead: Ahead, why: str) -> NotRestacked:
    message = f"Step {ahead.step.index}'s prepared proposal is not used ({why}): it is "
    message += "proposed again when its turn comes."
    rt.emit(ev.Notice(message=message))
    return NotRestacked(message)
