"""Dialogs during a review: why a proposal is rejected, and editing the remaining plan."""

from __future__ import annotations

from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Input, TextArea

from tui_engineer.tui.screens.dialog import Dialog


class RejectReasonScreen(Dialog[str | None]):
    """Result: the reason (the model sees it in its next proposal), or None to cancel."""

    title_text = "Reject this proposal"
    buttons = [("reject", "Reject", "error"), ("cancel", "Cancel", "default")]

    def __init__(self, step_title: str) -> None:
        super().__init__(f"Step: {step_title}\nWhat should change? The model gets your words.")

    def body_widgets(self) -> list[Widget]:
        return [Input(placeholder="e.g. keep the old function name", id="reason")]

    def on_mount(self) -> None:
        self.query_one("#reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.on_choice("reject")

    def on_choice(self, button_id: str) -> None:
        if button_id != "reject":
            self.dismiss(None)
            return
        reason = self.query_one("#reason", Input).value.strip()
        self.dismiss(reason or "rejected without a reason")


class EditPlanScreen(Dialog[list[str] | None]):
    """Edit the step under review and the steps after it: one step title per line. Result: the
    new titles (the current proposal is dropped and these steps replace the rest), or None."""

    title_text = "Edit the remaining plan"
    buttons = [("save", "Use this plan", "primary"), ("cancel", "Cancel", "default")]
    BINDINGS = [Binding("ctrl+s", "save", "Use this plan")]
    DEFAULT_CSS = "EditPlanScreen #plan-text { height: 12; }"

    def __init__(self, titles: list[str]) -> None:
        super().__init__(
            "One step per line, in order. The proposal under review is dropped; these steps "
            "replace the rest of the plan. Ctrl+S uses it, Escape cancels."
        )
        self.titles = titles

    def body_widgets(self) -> list[Widget]:
        return [TextArea("\n".join(self.titles), id="plan-text")]

    def on_mount(self) -> None:
        self.query_one("#plan-text", TextArea).focus()

    def action_save(self) -> None:
        self.on_choice("save")

    def on_choice(self, button_id: str) -> None:
        if button_id != "save":
            self.dismiss(None)
            return
        text = self.query_one("#plan-text", TextArea).text
        self.dismiss([line.strip() for line in text.splitlines() if line.strip()])
