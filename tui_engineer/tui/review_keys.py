"""The engine's questions and the review keys: the screens it asks through, and the
accept (with hunks left out) / reject / skip / edit-plan / undo / re-run-tests actions that
answer them."""

from __future__ import annotations

import asyncio
import time

from textual import work

from tui_engineer.base.errors import UserError
from tui_engineer.engine.plans.plan import Step, edit_line, read_edit_line
from tui_engineer.engine.reviews.approval import other
from tui_engineer.engine.reviews.hunks import HunkRef, units
from tui_engineer.engine.reviews.review import Decision, DroppedHunk
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.answering import Answering
from tui_engineer.tui.bridge import Asked
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.diff_review import ReviewDiffView
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.screens import (
    EditPlanScreen,
    RejectReasonScreen,
    StillWrongScreen,
    VerdictScreen,
)
from tui_engineer.tui.screens.pair import PartialAcceptScreen
from tui_engineer.tui.screens.timeout_choice import offer_timeout_choice

REVIEW_ACTIONS = {"accept", "reject", "skip", "edit_plan"}
# Seconds a proposal is on screen before `a` or `s` decide it. A step prepared ahead is under
# review a moment after the last accept: a double tap or a held key must not decide it unseen.
REVIEW_SETTLE = 0.5


class ReviewActions(Answering):
    """Mixed into `TuiEngineerApp` (before `App`, so its `check_action` is asked first, then
    the pair keys'); the key bindings themselves stay on the app, where Textual collects them."""

    options: RunOptions
    controller: SessionController
    status: StatusBar
    chat: ChatPane
    plan_pane: PlanPane
    diff: ReviewDiffView

    review_settle = REVIEW_SETTLE  # a test of a loaded machine may widen it
    _held_until = 0.0  # a press too soon keeps `a` and `s` waiting (a key held down)
    _said_for = -1.0  # the question (its `asked_at`) the wait was said for

    async def on_asked(self, message: Asked) -> None:
        self.refresh_bindings()
        if message.question == "still_wrong":
            self.status.phase = "what is still wrong?"
            summary, last = self.committed_summary(), self.last_accepted_title
            screen = StillWrongScreen(summary, last, shell=self)  # type: ignore[arg-type]
            self.push_screen(screen, message.answer)
        elif message.question == "review" and self.controller.session is not None:
            options = self.controller.session.rt.options  # a run cut by the timeout: ask
            offer_timeout_choice(self, message.proposal, options.test_timeout,  # type: ignore[arg-type]
                                 options.test_command, self.answer)  # fmt: skip
        elif message.question == "verdict":
            # The work is over (also after a server error): no spinner, no step "in progress".
            self.plan_pane.stop_active()
            self.status.busy = ""
            self.push_screen(VerdictScreen(self.controller.stopped_by), message.answer)

    def committed_summary(self) -> str:
        """From the plan's rows as they are now (an undo turns "accepted" into "undone")."""
        done = sum(1 for row in self.plan_pane.rows.values() if row.status == "accepted")
        return f"All steps are through: {done} committed."

    def last_accepted_title(self) -> str | None:
        """The step an undo takes back now (the last accepted one), None when there is none."""
        accepted = [row for row in self.plan_pane.rows.values() if row.status == "accepted"]
        return accepted[-1].info.title if accepted else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "retry":
            return self.controller.server_paused
        if action in REVIEW_ACTIONS and self.controller.server_paused:
            return False  # `r` is Retry meanwhile
        if action in REVIEW_ACTIONS:
            reviewing = self.controller.reviewing and len(self.screen_stack) == 1
            return True if reviewing else None
        if action == "undo":
            return self.undo_possible
        if action == "switch_approval":
            return True if self.controller.ready else None  # the settings' mode is known once ready
        if action == "run_tests":  # pressable in a session: when it cannot run now, it says why
            return True if self.controller.session is not None else None
        return super().check_action(action, parameters)  # type: ignore[misc]  # the pair keys'

    def action_switch_approval(self) -> None:
        """`m`: ask ⇄ auto. From the next proposal on: one under review now stays yours."""
        mode = other(self.status.approval or "ask")
        self.status.approval = mode
        if self.controller.session is not None:
            self.controller.session.approval = mode
        meaning = {
            "auto": "a step whose tests pass is committed without asking",
            "ask": "you review every step",
        }
        self.notify(f"Approval: {mode} — {meaning[mode]}.", timeout=4)

    @property
    def review_settled(self) -> bool:
        """The proposal under review was on screen long enough for `a` and `s` to decide it
        (counted from the engine's question, which opens as the proposal is shown)."""
        opened = self.controller.reviewer.asked_at + self.review_settle
        return time.monotonic() >= max(opened, self._held_until)

    def _too_soon(self, key: str) -> bool:
        """A decision key pressed as the proposal appeared: not taken, said once. Each such
        press starts the wait again, so a key held down never decides."""
        if self.review_settled:
            return False
        self._held_until = time.monotonic() + self.review_settle
        proposal = self.controller.reviewer.proposal
        if self._said_for != self.controller.reviewer.asked_at and proposal is not None:
            self._said_for = self.controller.reviewer.asked_at
            step = proposal.step.index
            self.notify(f"Step {step} just appeared: look it over, then press {key}.", timeout=4)
        return True

    def action_accept(self) -> None:
        if not self._too_soon("a"):
            self.accept_reviewed()

    def accept_reviewed(self) -> None:
        """`a`: accept; with hunks dropped, ask for reasons first, then the kept ones are tested
        and committed (or the review goes on, saying they failed)."""
        comments = tuple(self.diff.comments)
        kept_written = tuple(path for path in self.diff.written() if path in self.diff.kept_written)
        if not self.diff.dropped:
            self.answer(Decision("accept", comments=comments, kept_written=kept_written))
            return
        order = self.diff.units()
        dropped = [ref for ref in order if ref in self.diff.dropped]
        kept = len(order) - len(dropped)
        if kept == 0:
            self.notify(  # type: ignore[attr-defined]
                "Every hunk is dropped: skip the step (s) or reject it (r) instead.",
                severity="warning",
            )
            return
        texts = self._hunk_texts()

        def done(reasons: dict[HunkRef, str] | None) -> None:
            if reasons is None:
                return
            left_out = tuple(
                DroppedHunk(ref.path, ref.index, texts.get(ref, ""), reasons.get(ref, ""))
                for ref in dropped
            )
            self.answer(
                Decision("accept", dropped=left_out, comments=comments, kept_written=kept_written)
            )

        screen = PartialAcceptScreen(dropped, kept, len(order))
        self.push_screen(screen, done)  # type: ignore[attr-defined]

    def _hunk_texts(self) -> dict[HunkRef, str]:
        proposal = self.controller.reviewer.proposal
        if proposal is None:
            return {}
        return {unit.ref: unit.text for unit in units(proposal.diff)}

    def action_skip(self) -> None:
        if not self._too_soon("s"):
            self.answer(Decision("skip", "skipped by the human"))

    def action_reject(self) -> None:
        proposal = self.controller.reviewer.proposal
        if proposal is None:
            return

        def done(reason: str | None) -> None:
            if reason is not None:
                comments = tuple(self.diff.comments)  # sent with the reason, as one review
                self.answer(Decision("reject", reason, comments=comments))

        self.push_screen(RejectReasonScreen(proposal.step.title), done)

    def action_edit_plan(self) -> None:
        proposal = self.controller.reviewer.proposal
        if proposal is None:
            return
        steps = [proposal.step] + [s for s in proposal.plan if s.status == "pending"]
        known = {s.title: s for s in steps}

        def done(lines: list[str] | None) -> None:
            if lines is not None:
                new = [_step_for(*read_edit_line(line), known) for line in lines]
                self.answer(Decision("edit_plan", "plan edited by the human", new_steps=new))

        self.push_screen(EditPlanScreen([edit_line(s) for s in steps]), done)

    @property
    def undo_possible(self) -> bool:
        """Undo is offered while the engine waits for the human (or no session runs); in a
        review only once a step of this session is accepted. Not while the model works: the
        step it is making is built on the last commit."""
        if self.controller.reviewing:
            accepted = any(row.status == "accepted" for row in self.plan_pane.rows.values())
            return accepted and len(self.screen_stack) == 1
        return not self.controller.working or self.controller.reviewer.waiting

    def action_undo(self) -> None:
        if not self.undo_possible:
            self.notify("Wait until the engine asks you something.", severity="warning")
            return
        if self.controller.reviewing:
            # The proposal under review is built on the commit to undo: the engine undoes it,
            # drops the proposal and makes the step again (or says why it cannot, and the
            # review goes on).
            self.answer(Decision("undo", "undo the last accepted step"))
            return
        self._undo()

    @work(group="undo", exclusive=True, exit_on_error=False)
    async def _undo(self) -> None:
        try:
            if self.controller.session is not None:
                message = await self.controller.session.undo_last()
            else:
                from tui_engineer.session.repository import undo_last_step

                message = await asyncio.to_thread(undo_last_step, self.options.repo)
                await self.chat.note(message)
        except UserError as err:
            self.notify(str(err), title="Cannot undo", severity="error", timeout=12)
            return
        self.notify(message, title="Undone")

    def action_retry(self) -> None:
        """Paused on a model server that went away: make the call again now."""
        if self.controller.session is not None and self.controller.server_paused:
            self.controller.session.retry_now()
            self.status.phase = "retrying the model call"

    def action_run_tests(self) -> None:
        session = self.controller.session
        if session is None:
            self.notify("No session yet: the tests run once a request starts.", title="Tests")
            return
        if self.controller.tests_running:
            self.notify("The tests are running now: their result shows in Tests.", title="Tests")
            return
        if not self.controller.reviewer.waiting:
            self.notify(
                "The model is working: the tests run on its step as soon as it is written. "
                "Press t while the engine waits for you (a review) to run them again.",
                title="Tests",
            )
            return
        if session.rt.options.unverified:
            self.notify("No test command: this session is unverified.", title="Tests")
            return
        self.controller.tests_running = True
        self.controller.tests = self.run_worker(
            session.rerun_tests(), group="tests", exit_on_error=False
        )
        self.refresh_bindings()


def _step_for(title: str, fixes: list[str], known: dict[str, Step]) -> Step:
    """A step for the edited plan; a kept title keeps its description and files. `fixes`: the
    line's `[fixes: …]`, as the human left it."""
    old = known.get(title)
    if old is None:
        return Step(index=0, title=title, description=title, fixes=fixes)
    return Step(
        index=0,
        title=title,
        description=old.description,
        files=list(old.files),
        test_first=old.test_first,
        fixes=fixes,
    )
