"""A resumed session's step that was under review when it stopped: its recorded proposal is
applied again in the shadow and its tests run again, so the review goes on with the same diff
and no model call. When it no longer applies, or its tests no longer pass, the step is proposed
again instead (session/resume.py decides beforehand whether its files changed meanwhile)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.review import UNVERIFIED, Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.old_failures import step_aim

SHOWN_AGAIN = "shown again from the session's record (no model call); its tests ran again"


async def proposal_shown_again(
    rt: Runtime, request: str, plan: Sequence[Step], step: Step, diff: str
) -> Proposal | None:
    """The recorded proposal for `step`, applied and tested again; None to propose it anew."""
    step.status = "testing"
    rt.aims[step.index] = step_aim(request, plan, step)
    rt.emit(ev.AttemptStarted(step=step.index, attempt=0, max_attempts=rt.options.max_fix_attempts))
    if rt.baseline_task is not None:
        # The starting commit's suite runs in the shadow too (engine/steps/baseline.py): the diff
        # goes in after it, or it would test the change and race its `git add`. Its outcome
        # (a suite that cannot run) is the session's to raise.
        await asyncio.wait({rt.baseline_task})
    if not await asyncio.to_thread(rt.shadow.apply, diff):
        return await _anew(rt, step, "its recorded diff no longer applies")
    changes = await asyncio.to_thread(rt.shadow.changes)
    current = await asyncio.to_thread(rt.shadow.diff)
    rt.emit(ev.EditsApplied(step.index, 0, tuple(c.path for c in changes), current))
    report = None if rt.options.unverified else await rt.run_tests(step.index)
    if report is not None and not report.ok:
        return await _anew(rt, step, "its tests no longer pass")
    step.status = "review"
    runs = (UNVERIFIED,) if report is None else (f"full: {report.summary()}",)
    return Proposal(
        step=step,
        plan=list(plan),
        diff=current,
        report=report,
        attempts=0,
        notes=[SHOWN_AGAIN],
        test_runs=runs,
        unverified=rt.options.unverified,
    )


async def _anew(rt: Runtime, step: Step, why: str) -> None:
    await asyncio.to_thread(rt.shadow.reset)
    rt.emit(
        ev.Notice(
            message=f"Step {step.index}'s proposal under review when the session "
            f"stopped: {why}, so it is proposed again."
        )
    )
    return None
