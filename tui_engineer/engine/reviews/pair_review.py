"""One proposal's review, round after round, while the human works on it as a pair: a hand
edit is tested again and reviewed again; an accept with hunks left out tests the kept hunks
and is final only if they pass, else the review goes on saying so. Every tree that can be
committed was tested first (unless the session has no tests at all).

`PairReview` is held by engine/session.py's `Session`; the decisions it asks for come from
engine/reviews/decisions.py, handed in as `review`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from tui_engineer.base.errors import UserError
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.hand_edits import after_hand_edit
from tui_engineer.engine.reviews.partial import verify_kept
from tui_engineer.engine.reviews.retest import retested
from tui_engineer.engine.reviews.review import Decision, Proposal
from tui_engineer.engine.reviews.review_notes import comments_note, comments_text, dropped_note
from tui_engineer.vcs.changes import Change
from tui_engineer.vcs.partial import staged_tree

if TYPE_CHECKING:
    from tui_engineer.engine.ahead.pipeline import Pipeline
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.progress import Progress
    from tui_engineer.engine.runtime import Runtime


class PairReview:
    def __init__(
        self,
        rt: Runtime,
        pipeline: Pipeline,
        progress: Progress,
        review: Callable[[Step, Proposal], Awaitable[Decision]],
    ) -> None:
        self.rt, self.pipeline, self.progress = rt, pipeline, progress
        # the human's decision or the approval mode's (engine/reviews/decisions.py)
        self._review = review
        # Test runs a UI asked for (Session.rerun_tests): one during a review may write in the
        # shadow, so the changes listed for the review are listed again before accepting.
        self.reruns = 0

    async def rounds(
        self, request: str, step: Step, proposal: Proposal
    ) -> tuple[Decision, Proposal, list[Change] | None]:
        """Show `proposal`, ask, and carry out hand edits and kept subsets until a decision is
        final. Returns it, the proposal it is about (the kept hunks, tested, for a partial
        accept), and the changes listed for it when nothing ran in the shadow since."""
        whole = proposal
        while True:
            # Listing the changes stages them: the index holds this proposal's files until a
            # hand edit is answered (a front end answers at once), so nothing more is saved.
            # What the tests wrote is shown apart (a run since the last round may have written).
            changes, written, written_diff = await asyncio.to_thread(self.rt.shadow.listing)
            fresh = replace(
                proposal, written=tuple((c.status, c.path) for c in written),
                written_diff=written_diff,
            )  # fmt: skip
            whole = fresh if whole is proposal else whole
            proposal = fresh
            reruns = self.reruns
            await self.pipeline.start(request, self.progress.plan, step, passed=_passed(proposal))
            # Shown, then asked with nothing awaited between: a front end draws the proposal
            # as the question opens, so a key pressed on sight always has a question to answer.
            self._emit_proposal(step, proposal, changes)
            decision = await self._review(step, proposal)
            if decision.kind == "edited":
                whole = await self._edited(step, whole)
                proposal = whole
                continue
            if decision.kind == "retest":  # cut by the timeout: more time, or fewer tests
                whole = proposal = await retested(self.rt, step, whole, decision)
                continue
            if decision.kind == "accept" and decision.dropped:
                kept = await self._kept(step, whole, decision)
                if kept is None or not (kept.tests_ok or kept.unverified):
                    proposal = kept or whole  # still under review: the kept hunks failed
                    continue
                return decision, kept, None
            if decision.kind == "accept" and decision.comments:
                self.rt.review_notes.append(comments_note(step, decision.comments))
            if decision.kind == "reject" and decision.comments:
                reason = f"{decision.reason}\n\n{comments_text(decision.comments)}"
                decision = replace(decision, reason=reason)
            listed = changes if reruns == self.reruns else None
            return decision, whole if proposal.partial else proposal, listed

    async def _edited(self, step: Step, whole: Proposal) -> Proposal:
        """The human edited the proposal by hand: it is tested again (nothing changed: the
        same proposal, said so)."""
        tree = await asyncio.to_thread(staged_tree, self.rt.shadow)  # before anything stages
        await self.pipeline.base_changes()  # prepared steps are moved onto the new files
        edited = await after_hand_edit(self.rt, step, whole, tree)
        if edited is None:
            self.rt.emit(ev.Notice(message=f"Step {step.index}: the files are unchanged."))
            return whole
        return edited

    async def _kept(self, step: Step, whole: Proposal, decision: Decision) -> Proposal | None:
        """The kept hunks, tested; None when they cannot be put together (said)."""
        await self.pipeline.base_changes()  # built on the whole proposal: moved onto the kept hunks
        try:
            kept = await verify_kept(self.rt, step, whole, decision.dropped)
        except UserError as err:
            self.rt.emit(ev.Notice(message=str(err)))
            return None
        committed = kept.tests_ok or kept.unverified
        self.rt.review_notes.append(dropped_note(step, decision.dropped, committed))
        return kept

    def _emit_proposal(self, step: Step, proposal: Proposal, changes: list[Change]) -> None:
        self.rt.emit(
            ev.ProposalReady(
                step=step.index,
                title=step.title,
                diff=proposal.diff,
                tests_ok=proposal.tests_ok,
                summary=proposal.summary(),
                attempts=proposal.attempts,
                changes=tuple((c.status, c.path) for c in changes),
                notes=tuple(proposal.notes),
                actions=tuple(proposal.actions),
                test_runs=proposal.test_runs,
                unverified=proposal.unverified,
                old_failures=proposal.old_failures(),
                fixed=tuple(proposal.report.fixed) if proposal.report else (),
                still_failing=tuple(proposal.report.reached) if proposal.report else (),
                disowned=tuple(proposal.report.disowned.items()) if proposal.report else (),
                partial=proposal.partial,
                dropped=tuple((h.path, h.index) for h in proposal.dropped),
                edited=proposal.edited,
                written_by_tests=proposal.written,
                written_diff=proposal.written_diff,
            )
        )


def _passed(proposal: Proposal) -> bool:
    """Whether the next step may be built on this proposal: its tests passed (or the session
    has none to run)."""
    return proposal.tests_ok or proposal.unverified
