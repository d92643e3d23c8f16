"""A step's decision, from the question to the commit: the approval mode's answer or the
human's, said at once; an accept committed to its end whatever stops the session meanwhile
(DESIGN.md invariant 8); a skip, a stop or an edited plan carried out.

`Decisions` is held by engine/session.py's `Session`, which owns the loop; the plan and what
it came to are the session's `Progress` (engine/progress.py), shared with it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_engineer.base.disk import DiskFull
from tui_engineer.base.errors import UserError
from tui_engineer.engine import events as ev
from tui_engineer.engine.cleanup import settle, to_the_end
from tui_engineer.engine.plans.plan import infos
from tui_engineer.engine.plans.step_graph import dependants
from tui_engineer.engine.reviews.approval import auto_decision, by_tests
from tui_engineer.engine.reviews.review import BY_YOU, UNVERIFIED, Decision, Proposal, Reviewer
from tui_engineer.engine.reviews.review_notes import commit_lines
from tui_engineer.vcs.accept_journal import NoRoomToAccept, commit_decided, decide
from tui_engineer.vcs.changes import Change
from tui_engineer.vcs.repo import GitRefused
from tui_engineer.vcs.shadow import Shadow

if TYPE_CHECKING:
    from tui_engineer.engine.plans.plan import Step
    from tui_engineer.engine.progress import Progress
    from tui_engineer.engine.runtime import Runtime


# What a refused accept's message ends with (AcceptRefused).
AGAIN_NOW = "It is still under review: fix the cause, then accept again (or reject or skip it)."
AGAIN_ON_RESUME = "Fix the cause, then resume the session: the step is shown again to accept."


class StopSession(Exception):
    """The human stopped the session at a review: it ends with `outcome`."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome


class Decisions:
    """What the session's review loop calls once a proposal is ready: `review` asks,
    `accepted` and `settle` carry the answer out. `undo` is the session's own undo, run when
    the human answers a review with one."""

    def __init__(
        self,
        rt: Runtime,
        reviewer: Reviewer,
        progress: Progress,
        *,
        undo: Callable[[], Awaitable[str]],
    ) -> None:
        self.rt, self.reviewer, self.progress = rt, reviewer, progress
        # "ask" or "auto" (engine/reviews/approval.py); a front end may switch it at any time.
        self.approval: str = rt.options.approval
        self._ask_human: set[int] = set()  # steps whose accept "auto" gave was refused
        self._undo = undo

    async def review(self, step: Step, proposal: Proposal) -> Decision:
        """The human's decision, said at once. An accept that a stop (Ctrl-C, a signal)
        overtakes before the session saw it is still committed: a decision is never lost.
        An undo is carried out here: when refused (pushed, edited since) the review goes on
        with the same proposal."""
        auto = None if step.index in self._ask_human else auto_decision(self.approval, proposal)
        if auto is not None:
            self._said_at_once(step, auto, proposal)
            return auto
        while True:
            asking = asyncio.ensure_future(self.reviewer.review(proposal))
            try:
                # Shielded: a stop must not cancel a review whose answer is already given
                # (a key press, then Ctrl-C in the same instant) and so throw that answer away.
                decision = await asyncio.shield(asking)
            except asyncio.CancelledError:
                await self._stopped_in_review(step, proposal, asking)
                raise
            if decision.kind == "undo":
                try:
                    await self._undo()
                except UserError as err:
                    self.rt.emit(ev.UndoRefused(message=str(err)))
                    continue
            self._said_at_once(step, decision, proposal)
            return decision

    async def _stopped_in_review(
        self, step: Step, proposal: Proposal, asking: asyncio.Future[Decision]
    ) -> None:
        """The session is stopped during a review: a question still open goes away; an accept
        already given is committed."""
        if not asking.done():
            asking.cancel()
            await settle(asking)
        made = not asking.cancelled() and asking.exception() is None
        if made and asking.result().kind == "accept" and _commits(asking.result(), proposal):
            decision = asking.result()
            if decision.dropped:  # the kept hunks were never tested: nothing is committed
                self.rt.emit(ev.Notice(message=f"Step {step.index} not committed: stopped "
                                       "before its kept hunks were tested."))  # fmt: skip
                return
            try:
                await self._commit(step, proposal, decision)
            except GitRefused as err:
                self._refused(step, err, AGAIN_ON_RESUME)

    async def accepted(
        self, step: Step, proposal: Proposal, decision: Decision, changes: list[Change] | None
    ) -> bool:
        """Carry out an accept; False when git refused its commit (a hook, signing, the branch
        moved, files edited since): nothing was written, it was said, and the step is reviewed
        again. An accept nobody typed stops the session there instead (resumable), as --yes
        has no one to fix the cause; one that "auto" gave asks the human next."""
        try:
            await self.settle(step, proposal, decision, changes)
        except GitRefused as err:
            by_auto = by_tests(decision.by) and self.approval == "auto"
            if decision.by == BY_YOU or (by_auto and step.index not in self._ask_human):
                self._ask_human.add(step.index)
                self._refused(step, err, AGAIN_NOW)
                return False
            self._refused(step, err, AGAIN_ON_RESUME)
            if isinstance(err, NoRoomToAccept):  # the machine's state: a setup problem (exit 2)
                said = str(err).split(" Nothing was written")[0]
                raise DiskFull(
                    f"step {step.index} not committed: {said} Once space is freed, go on "
                    "with: tui-engineer run --resume"
                ) from None
            raise StopSession(
                "stopped",
                f"step {step.index} not committed (git refused it); once the cause is fixed, "
                "go on with: tui-engineer run --resume",
            ) from None
        return True

    def _refused(self, step: Step, err: GitRefused, then: str) -> None:
        self.rt.emit(
            ev.AcceptRefused(
                step=step.index,
                message=f"Step {step.index} is not committed: {err}\nNothing was written to "
                f"your files or branch. {then}",
            )
        )

    def _said_at_once(self, step: Step, decision: Decision, proposal: Proposal) -> None:
        """A decision is said as it is given, except an accept of a change: that is said once
        it is on disk (`_commit`), and one with hunks left out once the kept hunks pass."""
        if decision.kind != "accept" or not _commits(decision, proposal):
            self._decided(step, decision, proposal)

    def _decided(self, step: Step, decision: Decision, proposal: Proposal | None = None) -> None:
        """Said (the record keeps the review's marks: hunks left out, comments)."""
        self.rt.emit(
            ev.DecisionMade(
                step=step.index,
                decision=decision.kind,
                reason=decision.reason,
                by=decision.by,
                dropped=tuple((h.path, h.index, h.reason) for h in decision.dropped),
                kept=proposal.partial if proposal is not None and decision.dropped else "",
                comments=tuple((c.path, c.line, c.text) for c in decision.comments),
                edited=proposal is not None and proposal.edited,
                kept_written=decision.kept_written,
            )
        )

    async def settle(
        self,
        step: Step,
        proposal: Proposal,
        decision: Decision,
        changes: list[Change] | None = None,
    ) -> None:
        if decision.kind == "accept" and _commits(decision, proposal):
            await self._commit(step, proposal, decision, changes)
            return
        await asyncio.to_thread(self.rt.shadow.reset)
        if decision.kind == "accept":  # nothing to commit: the step needed no change
            step.status = "skipped"
            reason = "no changes to commit"
            if proposal.not_needed:
                reason = f"no longer needed ({proposal.not_needed}), as the plan check found"
            self.rt.emit(ev.StepSkipped(step=step.index, reason=reason))
            return
        if decision.kind == "edit_plan":
            # The human's list replaces this step and the pending ones (None: no steps left).
            step.status = "skipped"
            self._replace_remaining(decision.new_steps or [])
            return
        self.progress.unfinished = True
        step.status = "skipped" if decision.kind == "skip" else "failed"
        self.rt.emit(ev.StepSkipped(step=step.index, reason=decision.reason or decision.kind))
        if decision.kind == "skip":
            self._drop_dependants(step)
        if decision.kind == "stop":
            raise StopSession("stopped", decision.reason or "stopped by the human")

    def _replace_remaining(self, new_steps: list[Step]) -> None:
        """The human's edited list of steps replaces the pending ones, numbered on, said."""
        kept = [s for s in self.progress.plan if s.status != "pending"]
        first = len(kept) + 1
        for offset, step in enumerate(new_steps):
            step.index, step.status = first + offset, "pending"
        self.progress.plan = kept + new_steps
        self.rt.emit(ev.PlanReady(steps=infos(self.progress.plan)))

    def _drop_dependants(self, skipped: Step) -> None:
        """The pending steps that need a skipped step (they name it, or read what it changes:
        engine/plans/step_graph.py) go with it, said; the others stay."""
        for index in dependants(self.progress.plan, skipped.index):
            step = next(s for s in self.progress.plan if s.index == index)
            if step.status != "pending":
                continue
            step.status = "skipped"
            reason = f"it needs step {skipped.index}, which was skipped"
            self.rt.emit(ev.StepSkipped(step=index, reason=reason))

    async def _commit(
        self,
        step: Step,
        proposal: Proposal,
        decision: Decision,
        changes: list[Change] | None = None,
    ) -> None:
        """Commit the accepted step: its changes and, of the files its test runs wrote, those
        the human keeps. The decision is made durable first (the accept journal, fsynced:
        vcs/accept_journal.py) and only then announced, so whoever hears "accepted" (a script
        reading --json, the TUI, an editor) can count on it: from there a kill of any kind ends
        with the step committed, now or at the next start. To its end even when the session is
        stopped meanwhile (Ctrl-C, SIGTERM, a closed terminal): the branch stops moving, and
        the commit is counted and said, before the stop goes on and anything reports how the
        session ended."""
        shadow = self.rt.shadow
        body = self._commit_body(step, decision.by, _review_note(decision, proposal))
        kept = decision.kept_written

        async def decide_then_commit() -> str:
            step_changes = changes
            if kept:
                step_changes = await asyncio.to_thread(_with_kept, shadow, changes, kept)
            journal = await asyncio.to_thread(
                decide, shadow, title=step.title, body=body, model=self.rt.model.model,
                changes=step_changes,
            )  # fmt: skip
            self._decided(step, decision, proposal)  # on disk: now it may be said
            sha = await asyncio.to_thread(commit_decided, shadow.root, journal)
            # Said as soon as it is made: moving the shadow onto it is not the user's wait.
            self._committed(step, proposal, sha)
            try:
                await asyncio.to_thread(shadow.rebaseline)
            except GitRefused as err:  # the commit is made: not a refusal to review it again
                raise StopSession(
                    "stopped",
                    f"step {step.index} is committed as {sha[:8]}, but the session's "
                    f"shadow could not be moved onto it ({err}); go on with: tui-engineer run "
                    "--resume",
                ) from None
            return sha

        waiting = ev.Notice(
            message=f"Stopping once step {step.index}'s commit is made (your hooks are running); "
            "the accept is not lost."
        )
        held: list[bool] = []

        def hold() -> None:
            held.append(True)
            self.rt.emit(waiting)

        try:
            await to_the_end(decide_then_commit(), held=hold)
        except GitRefused as err:
            if not held:
                raise  # the caller says it, and what happens next
            self._refused(step, err, AGAIN_ON_RESUME)
            raise asyncio.CancelledError from None  # the stop that came meanwhile goes on

    def _committed(self, step: Step, proposal: Proposal, sha: str) -> None:
        step.status, step.commit = "accepted", sha
        self.progress.commits.append(sha)
        self.progress.last_accepted = proposal
        self.rt.emit(ev.StepCommitted(step=step.index, title=step.title, sha=sha))

    def _commit_body(self, step: Step, by: str, note: str = "") -> str:
        # The history says how each step got in: reviewed by you, or accepted on its tests;
        # and what the review changed (hunks left out, a hand edit, comments).
        accepted = f"Accepted: {by}." + (f"\n{note}" if note else "")
        if not self.rt.options.unverified:
            return f"{step.description}\n\n{accepted}"
        return f"{step.description}\n\n{UNVERIFIED.capitalize()}.\n{accepted}"  # in the history too


def _review_note(decision: Decision, proposal: Proposal) -> str:
    """What an accepted step's commit says about its review (engine/reviews/review_notes.py)."""
    review = commit_lines(
        decision.dropped, proposal.partial, proposal.edited, decision.comments,
        decision.kept_written,
    )  # fmt: skip
    untested = ""
    if proposal.report is not None and proposal.report.timed_out:  # accepted untested: say so
        untested = f"Untested: the tests ran out of time ({proposal.report.summary()})."
    return "\n".join(line for line in (review, _disowned_lines(proposal), untested) if line)


def _disowned_lines(proposal: Proposal) -> str:
    """The failures this change runs through that still fail, with the model's reason: the
    history keeps why the step went in with them red."""
    disowned = proposal.report.disowned if proposal.report is not None else {}
    return "\n".join(
        f"Still failing, and this change runs through it: {test_id}. Not this step's, says "
        f"the model: {why or '(no reason given)'}"
        for test_id, why in disowned.items()
    )


def _commits(decision: Decision, proposal: Proposal) -> bool:
    """An accept with something to commit: the step's change, or files the tests wrote that
    the human keeps."""
    return bool(proposal.diff.strip() or decision.kept_written)


def _with_kept(shadow: Shadow, changes: list[Change] | None, kept: tuple[str, ...]) -> list[Change]:
    """The step's changes and, of the files its test runs wrote, those the human keeps."""
    step = shadow.changes() if changes is None else changes
    return step + [c for c in shadow.written_changes() if c.path in kept]
