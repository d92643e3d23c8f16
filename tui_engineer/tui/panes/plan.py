"""The plan pane: each step with its live status; the step being worked on is highlighted.
Its keys (bound on the session's screen, so that they work whatever pane has the focus): `e`
edits the plan of the step under review and those after it, `u` undoes the last accepted
step; both answer the engine through the controller."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_engineer.base.errors import UserError
from tui_engineer.engine import events as ev
from tui_engineer.engine.events import StepInfo
from tui_engineer.engine.plans.plan import Step, edit_line, read_edit_line
from tui_engineer.engine.plans.step_graph import waiting_on
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.tui.answering import Say
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.engine_messages import EngineMessage, heard
from tui_engineer.tui.screens import EditPlanScreen

# status -> (icon, style); theme variables ($success...) are resolved when drawn.
_LOOK = {
    "pending": ("·", "dim"),
    "proposing": ("…", "bold $accent"),
    "testing": ("⧗", "bold $warning"),
    "fixing": ("↻", "bold $warning"),
    "awaiting review": ("?", "bold $primary"),
    "preparing": ("…", "$accent"),  # prepared beside the step under review (its turn later)
    "prepared": ("▸", "bold $success"),  # proposed and tested while an earlier one is reviewed
    "preparing again": ("↻", "bold $accent"),  # a chat message named it: prepared again with it
    "stale": ("!", "bold $warning"),
    "accepted": ("✓", "bold $success"),
    "rejected": ("✗", "$error"),
    "skipped": ("»", "dim"),
    "undone": ("↶", "dim"),
    "failed": ("✗", "bold $error"),
    "stopped": ("■", "$error"),  # the session ended (error or quit) while this step was going
}
ACTIVE = {"proposing", "testing", "fixing"}


@dataclass
class StepRow:
    info: StepInfo
    status: str = "pending"
    detail: str = ""  # e.g. "2/3" while fixing, the short sha once accepted


class PlanPane(OptionList):
    """Steps in order. Selecting one (click or Enter) posts `StepChosen` so the app can show it."""

    DEFAULT_CSS = "PlanPane { height: 1fr; }"

    class StepChosen(Message):
        def __init__(self, info: StepInfo) -> None:
            super().__init__()
            self.info = info

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: dict[int, StepRow] = {}
        self.current: int | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())

    def set_steps(self, steps: tuple[StepInfo, ...]) -> None:
        """A new or changed plan; statuses of steps already known are kept."""
        self.rows = {s.index: StepRow(s, *self._known(s.index)) for s in steps}
        self._redraw()

    def _known(self, index: int) -> tuple[str, str]:
        row = self.rows.get(index)
        return (row.status, row.detail) if row else ("pending", "")

    def set_status(self, index: int | None, status: str, detail: str = "") -> None:
        if index is None or index not in self.rows:
            return
        row = self.rows[index]
        row.status, row.detail = status, detail
        if status in {"proposing", "testing", "fixing", "awaiting review"}:
            self.current = index
        self._redraw()

    def stop_active(self) -> None:
        """The session is over: no step may still say it is being worked on."""
        for index, row in self.rows.items():
            if row.status in ACTIVE:
                self.set_status(index, "stopped")
        self.current = None

    def status_of(self, index: int) -> str:
        row = self.rows.get(index)
        return row.status if row else ""

    @property
    def lines(self) -> int:
        """Rows the pane lists: the steps, and the human's words above steps planned from them."""
        return len(self.rows) + len(self._asked_before())

    def _asked_before(self) -> dict[int, str]:
        """Step index -> the human's words to show above it: the first step planned from an
        answer to "what is still wrong?"."""
        shown, before = "", {}
        for index, row in self.rows.items():
            if row.info.asked and row.info.asked != shown:
                before[index] = row.info.asked
            shown = row.info.asked
        return before

    def _redraw(self) -> None:
        highlighted = self.highlighted
        asked = self._asked_before()
        options: list[Option] = []
        for index, row in self.rows.items():
            if index in asked:
                words = Text.assemble(("  you: ", "dim"), (f"“{asked[index]}”", "italic"))
                options.append(Option(words, disabled=True))
            options.append(Option(self._prompt(row), id=str(index)))
        self.set_options(options)
        if self.current is not None and self.current in self.rows:
            self.highlighted = self.get_option_index(str(self.current))
        elif highlighted is not None and highlighted < self.option_count:
            self.highlighted = highlighted

    # ----- what the plan says of the steps accepted

    def committed_summary(self) -> str:
        """From the rows as they are now (an undo turns "accepted" into "undone")."""
        done = sum(1 for row in self.rows.values() if row.status == "accepted")
        return f"All steps are through: {done} committed."

    def last_accepted_title(self) -> str | None:
        """The step an undo takes back now (the last accepted one), None when there is none."""
        accepted = [row for row in self.rows.values() if row.status == "accepted"]
        return accepted[-1].info.title if accepted else None

    # ----- keys: `e` edit the plan, `u` undo

    def edit_plan(self, controller: SessionController) -> None:
        """The step under review and the pending ones, one line each, to edit; the new plan
        goes to the engine as the review's answer."""
        proposal = controller.reviewer.proposal
        if proposal is None:
            return
        steps = [proposal.step] + [s for s in proposal.plan if s.status == "pending"]
        known = {s.title: s for s in steps}

        def done(lines: list[str] | None) -> None:
            if lines is not None:
                new = [_step_for(*read_edit_line(line), known) for line in lines]
                edited = Decision("edit_plan", "plan edited by the human", new_steps=new)
                controller.answer(edited)

        self.app.push_screen(EditPlanScreen([edit_line(s) for s in steps]), done)

    def undo_possible(self, controller: SessionController) -> bool:
        """Undo is offered while the engine waits for the human (or no session runs); in a
        review only once a step of this session is accepted. Not while the model works: the
        step it is making is built on the last commit."""
        if controller.reviewing:
            accepted = any(row.status == "accepted" for row in self.rows.values())
            return accepted and len(self.app.screen_stack) == 1
        return not controller.working or controller.reviewer.waiting

    def undo(self, controller: SessionController, repo: Path) -> None:
        if not self.undo_possible(controller):
            self.notify("Wait until the engine asks you something.", severity="warning")
            return
        if controller.reviewing:
            # The proposal under review is built on the commit to undo: the engine undoes it,
            # drops the proposal and makes the step again (or says why it cannot, and the
            # review goes on).
            controller.answer(Decision("undo", "undo the last accepted step"))
            return
        # On the app: a worker's failure is said by the app's handler (tui/worker_errors.py).
        undoing = self._undo(controller, repo)
        self.app.run_worker(undoing, group="undo", exclusive=True, exit_on_error=False)

    async def _undo(self, controller: SessionController, repo: Path) -> None:
        try:
            if controller.session is not None:
                message = await controller.session.undo_last()
            else:
                from tui_engineer.session.repository import undo_last_step

                message = await asyncio.to_thread(undo_last_step, repo)
                self.post_message(Say(message))
        except UserError as err:
            self.notify(str(err), title="Cannot undo", severity="error", timeout=12)
            return
        self.notify(message, title="Undone")

    def _prompt(self, row: StepRow) -> Text:
        icon, style = _LOOK.get(row.status, ("·", ""))
        style = self._resolve(style)
        label = f"{row.status} {row.detail}".strip()
        if row.status == "pending":  # the graph says whether it can start yet
            status = {i: r.status for i, r in self.rows.items()}
            unmet = waiting_on(row.info.after, status)
            label = f"waiting on {', '.join(map(str, unmet))}" if unmet else "ready"
        text = Text.assemble((f"{icon} ", style), f"{row.info.index}. {row.info.title}  ")
        if row.info.test_first:  # its new test must fail on the old code, then pass
            text.append("test first  ", style="dim italic")
        if row.info.fixes:  # tests red at the start that it must make pass
            names = ", ".join(i.rsplit("::", 1)[-1] for i in row.info.fixes)
            text.append(f"fixes {names}  ", style="dim italic")
        text.append(label, style=style)
        return text

    def _resolve(self, style: str) -> str:
        variables = self.app.theme_variables if self.is_mounted else {}
        words = [variables.get(w[1:], "") if w.startswith("$") else w for w in style.split()]
        return " ".join(w for w in words if w)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        row = self.rows.get(int(event.option.id or 0))
        if row is not None:
            self.post_message(self.StepChosen(row.info))

    # ----- the engine's events that change a step's status (tui/engine_messages.py)

    @on(heard(ev.PlanReady))
    def _plan_ready(self, message: EngineMessage[ev.PlanReady]) -> None:
        self.set_steps(message.event.steps)

    @on(heard(ev.StepStarted))
    def _step_started(self, message: EngineMessage[ev.StepStarted]) -> None:
        self.set_status(message.event.index, "proposing")

    @on(heard(ev.AttemptStarted))
    def _attempt_started(self, message: EngineMessage[ev.AttemptStarted]) -> None:
        event = message.event
        if event.attempt > 0:
            self.set_status(event.step, "fixing", f"{event.attempt}/{event.max_attempts}")
        else:
            self.set_status(event.step, "proposing")

    @on(heard(ev.TestsStarted))
    def _tests_started(self, message: EngineMessage[ev.TestsStarted]) -> None:
        step = message.event.step
        if step is not None:
            row = self.rows.get(step)
            detail = row.detail if row and row.status == "fixing" else ""
            self.set_status(step, "testing", detail)

    @on(heard(ev.ProposalReady))
    def _proposal_ready(self, message: EngineMessage[ev.ProposalReady]) -> None:
        self.set_status(message.event.step, "awaiting review")

    @on(heard(ev.StepPreparing))
    def _step_preparing(self, message: EngineMessage[ev.StepPreparing]) -> None:
        """A later step is being prepared beside this one (engine/ahead/pipeline.py)."""
        self.set_status(message.event.step, "preparing")

    @on(heard(ev.NextStepPrepared))
    def _next_step_prepared(self, message: EngineMessage[ev.NextStepPrepared]) -> None:
        """A later step was proposed and tested while this one is reviewed (or dropped)."""
        event = message.event
        self.set_status(event.step, "prepared" if event.ready else "pending")

    @on(heard(ev.NextStepRestarted))
    def _next_step_restarted(self, message: EngineMessage[ev.NextStepRestarted]) -> None:
        self.set_status(message.event.step, "preparing again")

    @on(heard(ev.DecisionMade))
    def _decision(self, message: EngineMessage[ev.DecisionMade]) -> None:
        event = message.event
        if event.decision == "reject":
            self.set_status(event.step, "rejected")
        elif event.decision == "undo":
            self.set_status(event.step, "pending")

    @on(heard(ev.StepCommitted))
    def _step_committed(self, message: EngineMessage[ev.StepCommitted]) -> None:
        self.set_status(message.event.step, "accepted", message.event.sha[:7])

    @on(heard(ev.StepUndone))
    def _step_undone(self, message: EngineMessage[ev.StepUndone]) -> None:
        self.set_status(message.event.step, "undone")

    @on(heard(ev.AcceptRefused))
    def _accept_refused(self, message: EngineMessage[ev.AcceptRefused]) -> None:
        """Nothing was committed; the proposal is shown again next (ProposalReady)."""
        self.set_status(message.event.step, "awaiting review")

    @on(heard(ev.StepSkipped))
    def _step_skipped(self, message: EngineMessage[ev.StepSkipped]) -> None:
        self.set_status(message.event.step, "skipped")

    @on(heard(ev.ErrorEvent))
    def _error(self, message: EngineMessage[ev.ErrorEvent]) -> None:
        """The step in hand is marked failed rather than left at "fixing 2/3"."""
        if self.current is not None and self.status_of(self.current) in ACTIVE:
            self.set_status(self.current, "failed")


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
