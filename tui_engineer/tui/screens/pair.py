"""Dialogs of a review done as a pair: accepting with hunks left out (a reason for each, if
you like) and a comment on one line of the diff."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Input, Label, TextArea

from tui_engineer.base.names import readable
from tui_engineer.engine.reviews.hunks import HunkRef
from tui_engineer.tui.screens.dialog import Dialog


class PartialAcceptScreen(Dialog[dict[HunkRef, str] | None]):
    """Result: a reason (maybe "") per dropped hunk, or None to go back to the review."""

    title_text = "Accept the kept hunks"
    buttons = [("accept", "Test and accept", "success"), ("cancel", "Cancel", "default")]
    DEFAULT_CSS = """
    PartialAcceptScreen #reasons { height: auto; max-height: 16; }
    PartialAcceptScreen #reasons Label { margin-top: 1; }
    """

    def __init__(self, dropped: list[HunkRef], kept: int, total: int) -> None:
        super().__init__(
            f"{kept} of {total} hunks kept. The tests run again on exactly those; the step is "
            "committed only if they pass. The model is told what you left out: a reason "
            "helps it (optional). Enter in the last box accepts."
        )
        self.dropped = dropped

    def body_widgets(self) -> list[Widget]:
        children: list[Widget] = []
        for n, ref in enumerate(self.dropped):
            children.append(Label(f"Dropped: {readable(ref.label())}"))
            children.append(Input(placeholder="why (optional)", id=f"reason-{n}"))
        return [VerticalScroll(*children, id="reasons")]

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        at = inputs.index(event.input)
        if at + 1 < len(inputs):
            inputs[at + 1].focus()
        else:
            self.on_choice("accept")

    def on_choice(self, button_id: str) -> None:
        if button_id != "accept":
            self.dismiss(None)
            return
        reasons = [i.value.strip() for i in self.query(Input)]
        self.dismiss(dict(zip(self.dropped, reasons, strict=True)))


class CommentScreen(Dialog[str | None]):
    """Result: the comment on the line, or None to cancel."""

    title_text = "Comment on this line"
    buttons = [("add", "Add comment", "primary"), ("cancel", "Cancel", "default")]

    def __init__(self, where: str, code: str) -> None:
        super().__init__(
            f"{where}: {code.strip()}\nIt is listed in the chat. Reject sends every comment to "
            "the model as one review; accept keeps them in the commit."
        )

    def body_widgets(self) -> list[Widget]:
        return [Input(placeholder="e.g. name this total, not t", id="comment")]

    def on_mount(self) -> None:
        self.query_one("#comment", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.on_choice("add")

    def on_choice(self, button_id: str) -> None:
        text = self.query_one("#comment", Input).value.strip()
        self.dismiss(text if button_id == "add" and text else None)


class HandEditScreen(Dialog[str | None]):
    """Edit one file of the proposal in the app, where no terminal editor can run (a browser:
    `serve`). Result: the new text (Ctrl+S), or None."""

    title_text = "Edit by hand"
    buttons = [("save", "Save and test", "primary"), ("cancel", "Cancel", "default")]
    BINDINGS = [Binding("ctrl+s", "save", "Save and test")]
    DEFAULT_CSS = """
    HandEditScreen > #dialog { width: 110; }
    HandEditScreen #hand-text { height: 24; }
    """

    def __init__(self, path: str, text: str, line: int) -> None:
        super().__init__(f"{path} — your change is tested again before anything is committed. "
                         "Ctrl+S saves, Escape cancels.")  # fmt: skip
        self.text, self.line = text, line

    def body_widgets(self) -> list[Widget]:
        return [TextArea(self.text, id="hand-text", show_line_numbers=True)]

    def on_mount(self) -> None:
        area = self.query_one("#hand-text", TextArea)
        area.focus()
        area.cursor_location = (max(self.line - 1, 0), 0)

    def action_save(self) -> None:
        self.on_choice("save")

    def on_choice(self, button_id: str) -> None:
        text = self.query_one("#hand-text", TextArea).text
        self.dismiss(text if button_id == "save" else None)


class TakeEditsScreen(Dialog[bool]):
    """The user edited, in their own tree, files the proposal under review also changes.
    Result: True to take those edits into the step (merged, then tested again)."""

    title_text = "Your edits and this proposal"
    buttons = [("take", "Take them into the step", "primary"), ("later", "Not now", "default")]
    cancel_value = False

    def __init__(self, paths: list[str]) -> None:
        names = ", ".join(readable(p) for p in paths)
        super().__init__(
            f"You edited {names} in your tree; this proposal changes it too. Take your edits "
            "into the step? They are merged with the proposal and the tests run again. Your "
            "files keep your edits either way: without this, accepting is refused rather "
            "than write over them."
        )

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id == "take")
