"""Approval modes: "ask" (the human reviews every step) or "auto" (a step whose tests pass is
accepted unasked). Decided here, in the engine, so every front end behaves the same."""

from __future__ import annotations

from typing import Literal

from tui_engineer.engine.review import Decision, Proposal

Approval = Literal["ask", "auto"]
APPROVALS: tuple[Approval, ...] = ("ask", "auto")
AUTO_PASSED = "auto (tests passed)"
AUTO = "auto"  # a stop or skip `run --yes` decided, with nobody to ask


def auto_decision(approval: str, proposal: Proposal) -> Decision | None:
    """The accept "auto" gives without asking, or None when the human is to be asked: in
    "ask", and for a step that failed, that no test verified, or that changed nothing."""
    if approval != "auto" or proposal.unverified or not proposal.tests_ok:
        return None
    if not proposal.diff.strip():
        return None
    return Decision.accept(by=AUTO_PASSED)


def other(approval: str) -> Approval:
    """The mode a switch goes to."""
    return "ask" if approval == "auto" else "auto"
