"""A whole session: plan the request, work each step through review, ask what is still wrong,
record the verdict. Talks to the human only through the Reviewer and events."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from tui_engineer.base.errors import UserError
from tui_engineer.base.user_shell import own_words
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.ahead.pipeline import Pipeline
from tui_engineer.engine.cleanup import to_the_end
from tui_engineer.engine.inbox import Inbox, put_back
from tui_engineer.engine.plans.plan import PlanError, Step, infos, single_step
from tui_engineer.engine.plans.plan_check import DROP_OR_KEEP, PlanCheck
from tui_engineer.engine.plans.planning import make_plan
from tui_engineer.engine.progress import Progress
from tui_engineer.engine.reviews.decisions import Decisions, StopSession
from tui_engineer.engine.reviews.pair_review import PairReview
from tui_engineer.engine.reviews.review import UNVERIFIED, Proposal, Reviewer
from tui_engineer.engine.reviews.shown_again import proposal_shown_again
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.server_wait import ServerPause
from tui_engineer.engine.start_notices import say_window, start_notices
from tui_engineer.engine.steps.baseline import BaselineFailed, start_baseline
from tui_engineer.engine.steps.repo_context import start_map, stop_map_filler
from tui_engineer.engine.steps.step_runner import propose_step
from tui_engineer.engine.steps.verification import probe_early
from tui_engineer.llm import BudgetExceeded, ModelReplyError
from tui_engineer.vcs.commit import undo_last
from tui_engineer.verify import TestReport


@dataclass
class SessionResult:
    outcome: str  # done | stopped | failed | budget | error
    commits: list[str] = field(default_factory=list)
    message: str = ""
    final_ok: bool = False

    @property
    def exit_code(self) -> int:
        if self.outcome == "done" and self.final_ok:
            return 0
        return 2 if self.outcome == "error" else 1


def _outcome_of(err: UserError) -> str:
    """Budget and bad-reply stops are the session failing (exit 1); the rest is setup (exit 2)."""
    if isinstance(err, BudgetExceeded):
        return "budget"
    if isinstance(err, ModelReplyError | PlanError):
        return "failed"
    return "error"


_DONE = {"accepted", "skipped", "undone"}  # statuses of steps the session is through with


class Session:
    def __init__(self, runtime: Runtime, reviewer: Reviewer, *, session_id: str) -> None:
        self.rt = runtime
        self.reviewer = reviewer
        self.session_id = session_id
        self.progress = Progress()  # plan, commits, last accept (engine/progress.py)
        # The next step is prepared while the human reviews this one (engine/ahead/pipeline.py).
        self.pipeline = Pipeline(runtime, session_id, enabled=runtime.options.pipeline)
        # What a review's answer does: asked, committed, skipped (engine/reviews/decisions.py).
        self.decisions = Decisions(runtime, reviewer, self.progress, undo=self.undo_last)
        # A proposal's review rounds: hand edits and kept hunks tested
        # (engine/reviews/pair_review.py).
        self.pair_review = PairReview(runtime, self.pipeline, self.progress, self.decisions.review)
        self.plan_check = PlanCheck(
            runtime
        )  # is the rest still needed? (engine/plans/plan_check.py)
        if isinstance(runtime.inbox, Inbox):  # a message that names the step prepared ahead
            runtime.inbox.listener = self.pipeline.chat  # goes to it as it is sent
        # A model server gone mid-step pauses the session (engine/server_wait.py).
        self.pause = ServerPause(runtime, runtime.options.server_wait, self._steps_left)
        # A session resumed from its run record (session/resume.py): see `restore`.
        self._after_start: list[ev.Event] = []  # said right after SessionStarted
        self._rejected: dict[int, list[str]] = {}  # reasons a step got before, per step
        self._shown: dict[int, str] = {}  # the diff under review when it stopped, per step
        self._earlier_ok = False  # the last step accepted before the resume passed its tests
        self.head = ""  # the commit it starts on, for the record (a resume compares with it)
        self.part_of = ""  # the editor's session this run is a later request of (ACP)

    @property
    def plan(self) -> list[Step]:
        return self.progress.plan

    @property
    def commits(self) -> list[str]:
        return self.progress.commits

    @property
    def approval(self) -> str:
        """The approval mode, "ask" or "auto" (engine/reviews/approval.py); a front end may switch
        it
        at any time (the TUI's key, ACP's session mode)."""
        return self.decisions.approval

    @approval.setter
    def approval(self, mode: str) -> None:
        self.decisions.approval = mode

    @property
    def server_wait(self) -> float | None:
        """At most this many seconds paused on a model server gone; a front end with a human
        at the keys sets None (until they retry or quit)."""
        return self.pause.limit

    @server_wait.setter
    def server_wait(self, seconds: float | None) -> None:
        self.pause.limit = seconds

    def restore(
        self,
        plan: list[Step],
        commits: list[str],
        rejections: dict[int, list[str]],
        *,
        last_ok: bool,
        said: list[ev.Event],
        shown: dict[int, str] | None = None,
    ) -> None:
        """Go on with a recorded session: its plan (each step with its outcome) and commits.
        `run` then makes no plan call: it works the pending steps (a step cut off is proposed
        again, knowing the reasons it was rejected for; one under review is shown again), then
        asks what is still wrong."""
        self.progress.plan, self.progress.commits = plan, list(commits)
        self._rejected = dict(rejections)
        self.progress.unfinished = any(s.status in {"skipped", "failed", "undone"} for s in plan)
        self._earlier_ok = last_ok
        self._after_start += said
        self._shown = dict(shown or {})  # engine/reviews/shown_again.py

    def say_after_start(self, event: ev.Event) -> None:
        """`event` is said right after SessionStarted (which a run record begins with): what
        happened before the session could start (its shadow made, a recorded one resumed)."""
        self._after_start.append(event)

    def send_feedback(self, text: str) -> None:
        """The human's chat message; delivered with the next model call."""
        self.rt.inbox.put_nowait(text)

    async def rerun_tests(self) -> TestReport | None:
        """Run the tests now on the current proposal (or the baseline when there is none).
        For a UI to call while the engine awaits a review; results arrive as events too.
        None in a session without a test command."""
        if self.rt.options.unverified:
            self.rt.emit(ev.Notice(message=f"No test command: {UNVERIFIED}."))
            return None
        current = next((s for s in self.plan if s.status == "review"), None)
        self.pair_review.reruns += 1
        return await self.rt.run_tests(current.index if current else None)

    def retry_now(self) -> None:
        """While paused on a model server that went away: make the call again now."""
        self.pause.retry_now()

    def _steps_left(self) -> list[str]:
        return [f"{s.index}. {s.title}" for s in self.plan if s.status not in _DONE]

    async def undo_last(self) -> str:
        """Take back the last accepted step's commit (refused if pushed or edited since), and
        rebuild the shadow on the new HEAD. While the engine awaits the human and no proposal
        is under review; during a review a front end answers Decision("undo") instead."""
        message = await asyncio.to_thread(undo_last, self.rt.root)
        await self.pipeline.drop()  # a step prepared ahead is built on the undone commit
        await asyncio.to_thread(self.rt.shadow.rebaseline)
        step = next((s for s in reversed(self.plan) if s.status == "accepted"), None)
        if step is not None and step.commit in self.commits:
            self.commits.remove(step.commit)
            step.status, step.commit = "undone", None
        # A step of this session was taken back: it no longer ends with every step in.
        self.progress.unfinished, self.progress.last_accepted = True, None
        self.rt.emit(ev.StepUndone(step=step.index if step else None, message=message))
        return message

    async def run(self, request: str) -> SessionResult:
        rt = self.rt
        bwrap = getattr(rt.sandbox, "bwrap", None)  # the local sandbox's; others have none
        rt.emit(
            ev.SessionStarted(
                session_id=self.session_id,
                request=request,
                model=rt.model.model,
                # "none" when the local one runs tests uncontained (--sandbox none)
                sandbox=getattr(rt.sandbox, "kind", rt.sandbox.name),
                test_command=rt.options.test_command,
                bwrap=bwrap.origin if bwrap else "",
                bwrap_path=bwrap.path if bwrap else "",
                head=self.head,
                part_of=self.part_of,
                checks=tuple(f"{c.name} ({c.reason})" for c in rt.options.declared_checks),
            )
        )
        for event in self._after_start:  # how its start went: its shadow, what it resumed
            rt.emit(event)
        tried = True
        try:
            for sentence in start_notices(rt):
                rt.emit(ev.Notice(message=sentence))
            result = await self._run(request)
        except StopSession as stop:
            result = SessionResult(stop.outcome, self.commits, str(stop))
        except UserError as err:
            outcome = _outcome_of(err)
            rt.emit(ev.ErrorEvent(message=str(err)))
            result = SessionResult(outcome, self.commits, str(err))
            tried = not isinstance(err, BaselineFailed)  # else nothing ran: no verdict to ask
        except asyncio.CancelledError:
            # The human quit (or a signal): said in the record, so it is no "crash".
            self._say_undelivered()
            rt.emit(ev.SessionFinished(outcome="quit", commits=tuple(self.commits), message=""))
            raise
        finally:
            if isinstance(rt.inbox, Inbox) and rt.inbox.listener == self.pipeline.chat:
                rt.inbox.listener = None  # from now on, queued for the next session
            # To its end even when more stop requests cancel the session meanwhile. The shadow
            # itself is not reset here: its owner (run_prepared) removes it next.
            await to_the_end(self.pipeline.close())
            await self.plan_check.close()
        if tried:
            await self._verdict()
        self._say_undelivered()
        rt.emit(
            ev.SessionFinished(
                outcome=result.outcome, commits=tuple(result.commits), message=result.message
            )
        )
        return result

    async def _run(self, request: str) -> SessionResult:
        probe_early(self.rt)
        # Asked beside the baseline and the map, not before them: the first prompt waits for it.
        window = asyncio.ensure_future(say_window(self.rt))
        baseline = start_baseline(self.rt)
        start_map(self.rt, request)  # beside the baseline's tests, not after them
        work = asyncio.ensure_future(self._work(request))
        try:
            if baseline is not None:
                # The baseline runs beside the plan and the first edit; if the suite cannot
                # run at all, the session stops at once rather than after the model's calls.
                await asyncio.wait({work, baseline}, return_when=asyncio.FIRST_COMPLETED)
                if baseline.done() and not baseline.cancelled() and baseline.exception():
                    raise baseline.exception()  # type: ignore[misc]
            return await work
        finally:
            for task in (work, baseline, self.rt.map_task, window):
                if task is not None and not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
            await to_the_end(stop_map_filler(self.rt))

    def _say_undelivered(self) -> None:
        """Chat the model never got goes into the record: a resumed session delivers it."""
        inbox, waiting = self.rt.inbox, []
        while not inbox.empty():
            waiting.append(inbox.get_nowait())
        for text in waiting:  # read, not taken
            put_back(inbox, text)
        waiting += [t for t in self.pipeline.messages if t not in waiting]  # a step not reached
        if waiting:
            self.rt.emit(ev.FeedbackPending(texts=tuple(waiting)))

    async def _work(self, request: str) -> SessionResult:
        if self.plan:  # resumed (`restore`): its recorded plan, no new plan call
            self._announce_plan()
            request = prompts.resumed_request(request, self.plan)
            if self.rt.baseline_task is not None:
                # No plan call for the starting commit's suite to run beside: the step's work
                # in the shadow waits for it (its `git add -A` raced the step's under load).
                await asyncio.wait({self.rt.baseline_task})
        else:
            await self._extend_plan(request, planned=self.rt.options.plan)
        while True:
            await self._work_pending(request)
            answer = await self.reviewer.still_wrong()
            if not answer or answer.strip().lower() in {"done", "nothing", "no"}:
                break
            request = prompts.still_wrong_request(answer)
            # The Plan pane names the human's words; the model gets the output too.
            await self._extend_plan(request, planned=True, asked=own_words(answer))
        final_ok = not self.progress.unfinished and self._final_ok()
        message = f"{len(self.commits)} step(s) committed"
        if self.rt.options.unverified:
            message += f" ({UNVERIFIED})"
        return SessionResult("done", self.commits, message, final_ok=final_ok)

    def _final_ok(self) -> bool:
        # The shadow tree equals the last accepted proposal (later skips reset to it), so that
        # proposal's test run is the final run: no need to run the suite again.
        last = self.progress.last_accepted
        if last is None:
            return self._earlier_ok  # resumed, nothing accepted since: the last one before
        if self.rt.options.unverified:
            return True  # the human chose to work without tests; every review said so
        return last.tests_ok

    async def _extend_plan(self, request: str, *, planned: bool, asked: str = "") -> None:
        """Plan `request` (the human's own words `asked`, for steps planned from feedback)."""
        first = len(self.plan) + 1
        if planned:
            steps = await make_plan(self.rt, request, first, asked)
        else:
            steps = [single_step(request, first)]
        if first == 1 and self.rt.options.write_tests:
            steps[0].test_first = True  # no tests yet: the first step writes them
        for step in steps:
            step.asked = asked  # shown with them (Plan pane), so the human sees what they answer
        self.plan.extend(steps)
        self._announce_plan()

    async def _work_pending(self, request: str) -> None:
        while (step := next((s for s in self.plan if s.status == "pending"), None)) is not None:
            self.rt.emit(ev.StepStarted(index=step.index, title=step.title))
            await self._review_loop(request, step)

    async def _review_loop(self, request: str, step: Step) -> None:
        rejections: list[str] = self._rejected.pop(step.index, [])
        proposal: Proposal | None = None  # one git refused to commit is reviewed again
        while True:
            proposal = proposal or await self._next_proposal(request, step, rejections)
            # Is the rest still needed once this is in? Asked while the human reads.
            self.plan_check.on_review(request, self.plan, proposal)
            # Hand edits and kept subsets of hunks are tested and reviewed again in there.
            decision, proposal, listed = await self.pair_review.rounds(request, step, proposal)
            self.plan_check.decided(decision.kind)
            if decision.kind == "undo":  # done: this proposal was built on the undone commit
                step.status, proposal = "pending", None
                continue
            if decision.kind == "accept":
                # Final at once: committed before anything waits for the step prepared ahead.
                if not await self.decisions.accepted(step, proposal, decision, listed):
                    continue  # git refused it (said): the same proposal, reviewed again
                if proposal.not_needed:  # dropped, never taken: its preparation goes too
                    await self.pipeline.drop_step(step.index)
                await self.pipeline.decided(decision.kind)
                return
            await self.pipeline.decided(decision.kind)
            if decision.kind == "reject":
                await asyncio.to_thread(self.rt.shadow.reset)
                rejections.append(decision.reason or "(no reason given)")
                step.status, proposal = "pending", None
                continue
            await self.decisions.settle(step, proposal, decision)
            return

    async def _next_proposal(self, request: str, step: Step, rejections: list[str]) -> Proposal:
        """The step prepared ahead, the one under review when a resumed session stopped, or a
        new one from the model; or, when the plan check found the step no longer needed, a
        proposal to drop it."""
        why = self.plan_check.not_needed(step)
        if why is not None:  # nothing changes, so nothing is tested: the summary says why
            note = f"Step {step.index} looks no longer needed ({why}). {DROP_OR_KEEP}"
            return Proposal(step, self.plan, "", None, attempts=0, notes=[note], not_needed=why)
        proposal = await self.pipeline.take(step) or await self._shown_again(request, step)
        if proposal is None:  # the steps that do not wait for it are prepared beside it
            await self.pipeline.start_beside(request, self.plan, step)
        return proposal or await propose_step(
            self.rt, request, self.plan, step, rejections,
            # The next step may be prepared as soon as this one's first edits are written.
            on_edits=lambda: self.pipeline.start_early(request, self.plan, step),
        )  # fmt: skip

    async def _shown_again(self, request: str, step: Step) -> Proposal | None:
        diff = self._shown.pop(step.index, None)
        if diff is None:
            return None
        return await proposal_shown_again(self.rt, request, self.plan, step, diff)

    def _announce_plan(self) -> None:
        self.rt.emit(ev.PlanReady(steps=infos(self.plan)))

    async def _verdict(self) -> None:
        verdict = await self.reviewer.verdict()
        if verdict is not None:
            self.rt.emit(
                ev.VerdictRecorded(
                    ran=verdict.ran,
                    worked=verdict.worked,
                    perfect=verdict.perfect,
                    comment=verdict.comment,
                )
            )
