"""A step whose test run was cut by test_timeout, tested again as the human chose in its review
(issue 48): with more time (the session's test_timeout raised) or with fewer tests (the
session's test command narrowed by the human). Nothing of the step changes and no model is
asked; the proposal is tested again and reviewed again, still cut if the run is cut again.
The third choice, accepting it untested, is a plain accept: its commit says it was untested
(engine/reviews/decisions.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision, Proposal
from tui_engineer.engine.steps.run_verdicts import TIMED_OUT, timed_out_note
from tui_engineer.engine.steps.verification import verify_attempt

if TYPE_CHECKING:
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.runtime import Runtime


def ran_out_of_time(proposal: Proposal) -> bool:
    """Was the proposal's last test run cut by test_timeout?"""
    return proposal.report is not None and proposal.report.timed_out


async def retested(rt: Runtime, step: Step, proposal: Proposal, decision: Decision) -> Proposal:
    """`proposal` tested again with the decision's timeout or test command (for the session)."""
    options = rt.options
    said = []
    if decision.test_timeout:
        options.test_timeout = float(decision.test_timeout)
        said.append(f"test_timeout is {options.test_timeout:g}s for the rest of this session")
    if decision.test_command and decision.test_command != options.test_command:
        options.test_command = decision.test_command
        if rt.selection is not None:
            rt.selection.test_command = decision.test_command
        said.append(f"the test command is `{decision.test_command}` for the rest of this session")
    if said:
        rt.emit(ev.Notice(message=f"Step {step.index}: testing it again; {'; '.join(said)}."))
    verified = await verify_attempt(rt, step.index)
    notes = [note for note in proposal.notes if not note.startswith(TIMED_OUT)]
    if verified.report.timed_out:
        notes.append(timed_out_note(verified.report, options.test_timeout))
    return replace(proposal, report=verified.report, test_runs=verified.summaries(), notes=notes)
