"""Accepting a step with hunks left out: the kept hunks are put together in the shadow and
tested there (affected tests first, then the full suite, as for any step), so what is committed
is exactly what was tested. A kept subset that fails goes back to review, the whole proposal
put back in the shadow and the failing run shown."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.hunks import HunkRef, kept_plan, summary
from tui_engineer.engine.reviews.review import UNVERIFIED, DroppedHunk, Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.verification import verify_attempt
from tui_engineer.vcs.partial import build_kept, restore_tree, save_tree


async def verify_kept(
    rt: Runtime, step: Step, whole: Proposal, dropped: Sequence[DroppedHunk]
) -> Proposal:
    """The proposal of only the kept hunks, tested. When its tests pass (or the session has
    none), the shadow holds exactly it, ready to commit; when they fail, the shadow holds the
    whole proposal again and the result (failing run, hunks left out) is for the review.
    Raises GitRefused when the kept hunks cannot be put together (the whole is back)."""
    plan = kept_plan(whole.diff, {HunkRef(h.path, h.index) for h in dropped})
    full = await asyncio.to_thread(save_tree, rt.shadow)
    written = rt.shadow.written.copy()  # who wrote what in it (vcs/written.py)
    await asyncio.to_thread(build_kept, rt.shadow, full, plan)
    diff = await asyncio.to_thread(rt.shadow.diff)
    kept = summary(plan.kept, plan.total)
    if rt.options.unverified:
        partial = replace(whole, diff=diff, partial=kept, dropped=tuple(dropped))
        return replace(partial, test_runs=(UNVERIFIED,))
    rt.emit(ev.Notice(message=f"Step {step.index}: testing the kept hunks only ({kept})."))
    verified = await verify_attempt(rt, step.index)
    partial = replace(
        whole,
        diff=diff,
        report=verified.report,
        test_runs=verified.summaries(),
        partial=f"{kept}, tests re-run",
        dropped=tuple(dropped),
    )
    if partial.tests_ok:
        return partial
    await asyncio.to_thread(restore_tree, rt.shadow, full, written)
    return replace(partial, diff=whole.diff)
