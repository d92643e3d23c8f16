"""The tests red on the starting commit, as a step's work sees them: which of them a step is
meant to make pass (its aim, verify/targets.py), and what the model is told of them when it
plans and proposes. A fix request waits for the baseline before its prompt: the model cannot fix
what it was never told fails (the step would still be judged by it, one fix round later). It
waits `fix_list_wait` seconds at most: on a suite of minutes the model is asked without the list
rather than after all of it, and the session says so. Any other request waits a little
(`QUIET_WAIT`), unsaid: whatever its words, a failure its change runs through is the step's
(engine/steps/reach.py), and a model told of it first answers right more often."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.baseline import baseline_ready
from tui_engineer.verify.targets import StepAim, fix_intent

QUIET_WAIT = 3.0  # seconds a request with no fix words waits for the baseline, unsaid

PLAN_FIXES = (
    'A step meant to make some of these pass lists their ids in its "fixes" (e.g. "fixes": '
    '["tests/test_x.py::test_y"]); it passes only when they do.'
)


def step_aim(request: str, plan: Sequence[Step], step: Step) -> StepAim:
    """A step's aim. The request points for the step only when the step is the whole of it;
    a planned step points with its own title and check, and lists its `fixes`."""
    text = "\n".join([request, step.title, step.description, step.verify])
    own = "\n".join([step.title, step.verify])
    pointing = f"{request}\n{own}" if len(plan) <= 1 else own  # a one-step plan's title too
    return StepAim(text, pointing, tuple(step.fixes))


async def failing_at_start(rt: Runtime, aim: StepAim, *, planning: bool = False) -> str:
    """What fails on the starting commit, for a prompt ('' when nothing does, or when it is
    not known yet and the request is no fix)."""
    if aim.fixes or fix_intent(aim.pointing):
        await _baseline_within(rt, rt.options.fix_list_wait)
    else:
        await _baseline_within(rt, min(QUIET_WAIT, rt.options.fix_list_wait), quiet=True)
    baseline = rt.known_baseline()
    if baseline is None or not baseline.failing:
        return ""
    text = baseline.for_model(
        aim.targets(baseline.failing), who="The request" if planning else "This step"
    )
    return f"{text}\n{PLAN_FIXES}" if planning else text


async def _baseline_within(rt: Runtime, seconds: float, quiet: bool = False) -> None:
    """The baseline, waited for `seconds` at most (said once when it takes longer, unless
    `quiet`); raises BaselineFailed when it is known that the suite cannot run."""
    task = rt.baseline_task
    if task is not None and rt.known_baseline() is None:
        done, _ = await asyncio.wait({task}, timeout=seconds)  # the run goes on either way
        if not done:
            if not quiet and "fix list" not in rt._warned:
                rt._warned.add("fix list")
                rt.emit(ev.Notice(message=late_list_notice(seconds)))
            return
    await baseline_ready(rt)


def late_list_notice(seconds: float) -> str:
    return (
        f"The tests on the starting commit still run after {seconds:g} s: the model is asked "
        "without the list of what fails there. A step is still judged by those failures once "
        "the run ends (fix_list_wait sets how long to wait)."
    )
