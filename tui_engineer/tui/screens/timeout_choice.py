"""A step's tests cut by test_timeout (issue 48): instead of only a note in the review, the
human is asked what to do, with how long the run took. Wait longer: the tests run again with
twice the timeout (for the rest of the session); run fewer tests: the test command, edited by
the human, runs instead (for the rest of the session); accept untested: committed, its commit
saying so; or review it as it is. The engine carries each out (engine/reviews/retest.py);
headless never asks, it stops with the reason and the setting (docs/headless.md)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.widget import Widget
from textual.widgets import Input

from tui_engineer.engine.reviews.review import Decision, Proposal
from tui_engineer.tui.screens.dialog import Dialog

LONGER = 2  # "wait longer" multiplies the timeout by this


class TimeoutChoiceScreen(Dialog[str | None]):
    """Result: "wait", "fewer", "untested", or None (review it as it is)."""

    title_text = "The tests ran out of time"
    cancel_value = None

    def __init__(self, proposal: Proposal, timeout: float) -> None:
        summary = proposal.report.summary() if proposal.report is not None else ""
        super().__init__(
            f"Step {proposal.step.index}: {proposal.step.title}\n"
            f"Its tests were stopped by the test timeout ({summary}): they say nothing about "
            "the change, which is kept as it is; the model was not asked about it.\n"
            "Escape reviews it as it is."
        )
        self.buttons = [
            ("wait", f"Wait longer ({timeout * LONGER:g}s)", "primary"),
            ("fewer", "Run fewer tests", "default"),
            ("untested", "Accept untested", "warning"),
            ("review", "Review as it is", "default"),
        ]

    def on_choice(self, button_id: str) -> None:
        self.dismiss(None if button_id == "review" else button_id)


class FewerTestsScreen(Dialog[str | None]):
    """The test command to use from now on, edited from the current one; None to cancel."""

    title_text = "Run fewer tests"
    buttons = [("run", "Run these", "primary"), ("cancel", "Cancel", "default")]

    def __init__(self, command: str) -> None:
        super().__init__(
            "The test command for the rest of this session: name fewer tests (a folder, a "
            "module, your runner's labels). The whole of it runs before each commit."
        )
        self.command = command

    def body_widgets(self) -> list[Widget]:
        return [Input(self.command, id="command")]

    def on_mount(self) -> None:
        self.query_one("#command", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.on_choice("run")

    def on_choice(self, button_id: str) -> None:
        command = self.query_one("#command", Input).value.strip()
        self.dismiss(command if button_id == "run" and command else None)


def offer_timeout_choice(
    app: App[object],
    proposal: Proposal | None,
    timeout: float,
    command: str,
    answer: Callable[[Decision], object],
) -> bool:
    """Open the choice over a review whose tests ran out of time; False when they did not.
    `answer` gives the review its decision (the app's, which says what happens next)."""
    if proposal is None or proposal.report is None or not proposal.report.timed_out:
        return False

    def fewer(new: str | None) -> None:
        if new:
            answer(Decision("retest", "the tests run again: fewer tests", test_command=new))

    def chosen(choice: str | None) -> None:
        if choice == "wait":
            longer = timeout * LONGER
            answer(Decision("retest", "the tests run again: more time", test_timeout=longer))
        elif choice == "fewer":
            app.push_screen(FewerTestsScreen(command), fewer)
        elif choice == "untested":
            answer(Decision.accept())

    app.push_screen(TimeoutChoiceScreen(proposal, timeout), chosen)
    return True
