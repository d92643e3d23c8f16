"""What the app itself does with the engine's events and questions, after the panes have had
theirs (tui/engine_messages.py): the status bar's phase and clock, the notifications, the
dialogs (what is still wrong, the verdict, a test run cut by the timeout, a suite that cannot
run), the Files pane's marks, the focus on a new proposal, and the keys' state in the footer
(paused, a test run going).

`AppEngineEvents` is a plain helper the app owns: its `on(EngineMessage)` handler, its
`on_asked` and `on_answered` hand over here. Each event class has its handler by type
(`hear.register`), as a pane's are by message class: no table names them.
"""

from __future__ import annotations

from functools import singledispatchmethod
from typing import TYPE_CHECKING, Any, Protocol

from tui_engineer.engine import events as ev
from tui_engineer.tui.answering import AFTER_DECISION
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.screens import ProblemScreen, StillWrongScreen, VerdictScreen
from tui_engineer.tui.screens.timeout_choice import offer_timeout_choice

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from tui_engineer.session.options import RunOptions
    from tui_engineer.tui.bridge import Asked
    from tui_engineer.tui.controller import Answered, SessionController
    from tui_engineer.tui.panes.chat_input import ChatInput
    from tui_engineer.tui.panes.diff_pane import DiffPane
    from tui_engineer.tui.panes.plan import PlanPane
    from tui_engineer.tui.panes.status import StatusBar
    from tui_engineer.tui.session_screen import SessionScreen


class ShowsEngineEvents(Protocol):
    """What of the app its engine events use (tui/app.py's `TuiEngineerApp`; it is not
    imported here, which it imports)."""

    options: RunOptions
    controller: SessionController
    status: StatusBar
    plan_pane: PlanPane
    diff: DiffPane
    chat_input: ChatInput
    session_screen: SessionScreen

    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def focused(self) -> Widget | None: ...

    def apply_layout(self) -> None: ...
    def show_pane(self, key: str) -> None: ...
    def refresh_bindings(self) -> None: ...
    def push_screen(self, screen: Any, callback: Any = None) -> Any: ...
    def exit(self, result: int | None = None, return_code: int = 0) -> None: ...
    def notify(self, message: str, *, title: str = "", **kwargs: Any) -> None: ...


class AppEngineEvents:
    """One per app. Its handlers run last for each event, after every pane's."""

    def __init__(self, app: ShowsEngineEvents) -> None:
        self.app = app
        self.controller = app.controller

    # ----- the engine asks, a key answers

    def asked(self, message: Asked) -> None:
        """The engine asks: a review is answered with the session screen's keys; the end of
        the work with these dialogs."""
        app, status = self.app, self.app.status
        app.refresh_bindings()
        if message.question == "still_wrong":
            status.phase = "what is still wrong?"
            summary = app.plan_pane.committed_summary()
            last = app.plan_pane.last_accepted_title  # asked again after each undo
            app.push_screen(
                StillWrongScreen(summary, last, shell=app.session_screen), message.answer
            )
        elif message.question == "review" and self.controller.session is not None:
            options = self.controller.session.rt.options  # a run cut by the timeout: ask
            offer_timeout_choice(app, message.proposal, options.test_timeout,  # type: ignore[arg-type]
                                 options.test_command, self.controller.answer)  # fmt: skip
        elif message.question == "verdict":
            # The work is over (also after a server error): no spinner, no step "in progress".
            app.plan_pane.stop_active()
            status.busy = ""
            app.push_screen(VerdictScreen(self.controller.stopped_by), message.answer)

    def answered(self, message: Answered) -> None:
        """A key answered the review: until the engine's next event the status must not keep
        saying "review"."""
        phase = AFTER_DECISION.get(message.decision.kind)
        if phase is not None:
            self.app.status.phase = phase
        self.app.refresh_bindings()

    # ----- the engine's events, each handler registered for its event class

    @singledispatchmethod
    def hear(self, event: ev.Event) -> None:
        """One engine event; most are the panes' alone, and the app does nothing more."""

    @hear.register
    def _session_started(self, event: ev.SessionStarted) -> None:
        self.controller.stopped_by = ""
        self.app.status.phase = "planning" if self.app.options.plan else "working"
        self.app.status.start_clock()

    @hear.register
    def _plan_ready(self, event: ev.PlanReady) -> None:
        self.app.apply_layout()  # the plan pane's height follows its steps

    @hear.register
    def _server_paused(self, event: ev.ServerPaused) -> None:
        self.controller.server_paused = True
        self.app.notify(
            "The model server does not answer: paused. r retries now; it also goes on by itself "
            "when the server is back.",
            title="Model server gone",
            severity="warning",
            timeout=12,
        )
        self.app.refresh_bindings()

    @hear.register
    def _server_resumed(self, event: ev.ServerResumed) -> None:
        self.controller.server_paused = False
        self.app.refresh_bindings()

    @hear.register
    def _edits_applied(self, event: ev.EditsApplied) -> None:
        if event.diff.strip():  # the Diff pane shows it: its files are marked
            self.mark_changes({file.path: file.status for file in self.app.diff.files})

    @hear.register
    def _proposal_ready(self, event: ev.ProposalReady) -> None:
        app = self.app
        self.controller.proposals_seen += 1
        self.mark_changes({path: letter[:1] for letter, path in event.changes})
        app.show_pane("diff")
        if not app.chat_input.value and app.focused is app.chat_input:
            app.diff.focus()  # the review keys work at once; a half-typed message keeps focus

    @hear.register
    def _decision(self, event: ev.DecisionMade) -> None:
        if event.decision != "edited":  # tested again, then reviewed again: marks stay
            self.mark_changes({})

    def mark_changes(self, marks: dict[str, str]) -> None:
        """The files the step changes, marked in the Files pane (its edits by the user are
        offered to the step: the app's _files_changed)."""
        self.controller.changes = set(marks)
        if self.app.screen_stack:
            for tree in self.app.screen_stack[0].query(RepoTree):
                tree.mark_changes(marks)

    @hear.register
    def _step_undone(self, event: ev.StepUndone) -> None:
        screen = self.app.screen
        if isinstance(screen, StillWrongScreen):
            screen.set_summary(self.app.plan_pane.committed_summary())

    @hear.register
    def _undo_refused(self, event: ev.UndoRefused) -> None:
        """The review goes on, with the same proposal."""
        current = self.app.plan_pane.current
        self.app.status.phase = f"review step {current} (undo refused)" if current else "review"
        self.app.notify(event.message, title="Cannot undo", severity="error", timeout=12)

    @hear.register
    def _accept_refused(self, event: ev.AcceptRefused) -> None:
        self.app.notify(event.message, title="Not committed", severity="error", timeout=20)

    @hear.register
    def _budget_warning(self, event: ev.BudgetWarning) -> None:
        self.app.notify(event.message, title="Budget", severity="warning", timeout=10)

    @hear.register
    def _error(self, event: ev.ErrorEvent) -> None:
        self.controller.stopped_by = event.message  # for the verdict dialog
        self.app.notify(event.message, title="Error", severity="error", timeout=15)

    @hear.register
    def _tests_started(self, event: ev.TestsStarted) -> None:
        self.controller.tests_running = True

    @hear.register
    def _tests_finished(self, event: ev.TestsFinished) -> None:
        self.controller.tests_running = False

    @hear.register
    def _baseline_failed(self, event: ev.BaselineFailed) -> None:
        """The suite cannot run on the starting commit: a start-up screen says why and what
        to do (the session has stopped; "Try again" leaves the app open for a new request)."""

        def chosen(retry: bool | None) -> None:
            if not retry:
                self.app.exit()

        self.app.push_screen(ProblemScreen("The tests cannot run", event.message), chosen)
