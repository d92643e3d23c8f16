"""Approval modes: "ask" (the human reviews every step) or "auto" (a step whose tests pass is
accepted unasked). Decided here, in the engine, so every front end behaves the same."""

from __future__ import annotations

from typing import Literal

from tui_engineer.engine.reviews.review import Decision, Proposal, Verdict

Approval = Literal["ask", "auto"]
APPROVALS: tuple[Approval, ...] = ("ask", "auto")
AUTO_PASSED = "auto (tests passed)"
AUTO = "auto"  # a stop or skip `run --yes` decided, with nobody to ask
# A step accepted on its tests while a test its change runs through still fails, which the model
# said is not the step's (edits/disown.py): never "tests passed"; the reason is in the commit.
AUTO_DISOWNED = "auto (tests pass but for {ids}: not this step's, says the model)"


def on_its_tests(proposal: Proposal) -> Decision:
    """The accept a step's passing tests give: "tests passed", or, when the model disowned a
    failure the change runs through, a decision that says so."""
    disowned = proposal.report.disowned if proposal.report is not None else {}
    if not disowned:
        return Decision.accept(by=AUTO_PASSED)
    return Decision.accept(by=AUTO_DISOWNED.format(ids=", ".join(disowned)))


def by_tests(by: str) -> bool:
    """Was this accept given by a step's tests (in "auto" or by --yes)?"""
    return by == AUTO_PASSED or by.startswith(AUTO_DISOWNED.split("{", 1)[0])


def auto_decision(approval: str, proposal: Proposal) -> Decision | None:
    """The accept "auto" gives without asking, or None when the human is to be asked: in
    "ask", and for a step that failed, that no test verified, or that changed nothing."""
    if approval == "auto" and proposal.not_needed:
        return Decision.accept(by=AUTO_PASSED)  # the drop is said: engine/reviews/decisions.py
    if approval != "auto" or proposal.unverified or not proposal.tests_ok:
        return None
    if not proposal.diff.strip():
        return None
    return on_its_tests(proposal)


def other(approval: str) -> Approval:
    """The mode a switch goes to."""
    return "ask" if approval == "auto" else "auto"


class AutoReviewer:
    """`run --yes`: nobody to ask. Accept every step whose tests pass (an unverified session's
    steps too); stop at the first one that cannot be made to pass, where "auto" would ask."""

    async def review(self, proposal: Proposal) -> Decision:
        if proposal.not_needed:
            return Decision.accept(by=AUTO_PASSED)
        if proposal.tests_ok and proposal.diff.strip():
            return on_its_tests(proposal)
        if proposal.unverified and proposal.diff.strip():
            # The human chose a session without tests, and --yes to accept its steps.
            return Decision.accept(by="auto (--yes, unverified)")
        if proposal.tests_ok:
            return Decision("skip", "the step needed no change", by=AUTO)
        why = proposal.summary() if proposal.report else "no usable edit"
        reason = f"step {proposal.step.index} could not be made to pass ({why})"
        return Decision("stop", reason, by=AUTO)  # recorded as --yes's, not "by you"

    async def still_wrong(self) -> str | None:
        return None

    async def verdict(self) -> Verdict | None:
        return None
