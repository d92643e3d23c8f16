"""The end of the plan: "What is still wrong?" and the session's verdict."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from textual.widget import Widget
from textual.widgets import Input, RadioButton, RadioSet, Static

from tui_engineer.engine.reviews.review import Verdict
from tui_engineer.tui.screens.dialog import Dialog


class ShellAnswers(Protocol):
    """The human's shell (the session's screen, tui/session_screen.py): a `!command` typed in
    the box runs there, and its output goes with the answer."""

    def run_shell(self, command: str, *, attach: bool = False) -> None: ...
    def attached_line(self) -> str: ...
    def take_attached(self) -> str: ...


class StillWrongScreen(Dialog[str]):
    """Result: what is still wrong (new steps are planned from it), or "" when done.
    Undo takes back the last accepted step and keeps the dialog open, the box focused again (so
    what the user goes on typing lands there); a further undo asks first."""

    title_text = "What is still wrong?"
    buttons = [
        ("more", "Plan new steps", "primary"),
        ("undo", "Undo last step", "warning"),
        ("done", "Done", "success"),
    ]
    escape_decides = False

    def __init__(
        self,
        summary: str,
        last_accepted: Callable[[], str | None],
        shell: ShellAnswers | None = None,
    ) -> None:
        self.shell = shell
        self.summary = summary
        super().__init__(self._text())
        self.last_accepted = last_accepted  # the title of the step an undo would take back
        self.undone = 0

    def _text(self) -> str:
        text = (
            f"{self.summary}\nDescribe what is still wrong and the model plans new steps for "
            "it, or choose Done to finish the session."
        )
        if self.shell is None:
            return text
        attached = self.shell.attached_line()
        if attached:
            return f"{text}\n{attached}: goes with your answer (Enter alone sends it alone)."
        return f"{text}\n!command runs a command in your shell, to show its output."

    def set_summary(self, summary: str) -> None:
        """The count changed under the open dialog (an undo): say the new one."""
        self.summary = summary
        self.query_one("#dialog-body", Static).update(self._text())

    def shell_said(self, line: str) -> None:
        """A command's output was attached: say it goes with the answer."""
        self.query_one("#dialog-body", Static).update(self._text())

    def body_widgets(self) -> list[Widget]:
        return [Input(placeholder="e.g. mul should reject strings", id="still-wrong")]

    def on_mount(self) -> None:
        self.query_one("#still-wrong", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if value.startswith("!") and self.shell is not None:  # the human's own command
            event.input.clear()
            self.shell.run_shell(value[1:], attach=True)
            return
        attached = self.shell is not None and self.shell.attached_line()
        self.on_choice("more" if value or attached else "done")

    def on_choice(self, button_id: str) -> None:
        if button_id == "undo":
            self._undo()
            return
        text = self.query_one("#still-wrong", Input).value.strip()
        if button_id == "more" and self.shell is not None:
            attachment = self.shell.take_attached()
            text = f"{text}\n\n{attachment}".strip() if attachment else text
        self.dismiss(text if button_id == "more" and text else "")

    def _undo(self) -> None:
        box = self.query_one("#still-wrong", Input)
        title = self.last_accepted()
        if self.undone == 0 or title is None:
            self.undone += 1
            self.app.screen_stack[0].action_undo()  # type: ignore[attr-defined]  # the session's screen
            box.focus()
            return

        def answered(sure: bool | None) -> None:
            if sure:
                self.undone += 1
                self.app.screen_stack[0].action_undo()  # type: ignore[attr-defined]  # the session's screen
            box.focus()

        self.app.push_screen(ConfirmUndoScreen(title), answered)


class ConfirmUndoScreen(Dialog[bool]):
    """Asked before a further undo from "What is still wrong?": a stray Enter on the undo
    button must not take back one accepted step after another. Result: True to undo."""

    title_text = "Undo another step?"
    buttons = [("undo", "Undo it", "warning"), ("keep", "Keep it", "primary")]
    cancel_value = False

    def __init__(self, title: str) -> None:
        super().__init__(f"This takes back '{title}' too: its commit leaves your branch.")

    def on_mount(self) -> None:
        self.query_one("#keep").focus()  # Enter keeps the step

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id == "undo")


LEVELS = [
    ("none", "It did not run"),
    ("ran", "It ran, but does not work"),
    ("works", "It works"),
    ("perfect", "It is perfect"),
]


class VerdictScreen(Dialog[Verdict | None]):
    """How did the session go? Saved in the run record. Result: the verdict, or None to skip.
    `stopped_by`: the error that ended the session, said on top (the chat that says it too is
    under the dialog)."""

    title_text = "How did it go?"
    buttons = [("save", "Save verdict", "primary"), ("skip", "Skip", "default")]
    escape_decides = False

    def __init__(self, stopped_by: str = "") -> None:
        super().__init__(stopped_by)  # the error's own sentence, as the chat says it

    def body_widgets(self) -> list[Widget]:
        # Nothing preselected: an Enter must not record "it works" for you.
        buttons = [RadioButton(label, id=f"level-{key}") for key, label in LEVELS]
        return [
            RadioSet(*buttons, id="levels"),
            Input(placeholder="Any comment? (optional)", id="comment"),
        ]

    def on_mount(self) -> None:
        self.query_one("#comment", Input).focus()  # Enter saves; the levels take a click or Tab

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.on_choice("save")

    def on_choice(self, button_id: str) -> None:
        if button_id != "save":
            self.dismiss(None)
            return
        pressed = self.query_one("#levels", RadioSet).pressed_button
        if pressed is None or not pressed.id:
            self.notify("Pick how it went first (or Skip).", timeout=3)
            return
        level = pressed.id.removeprefix("level-")
        comment = self.query_one("#comment", Input).value.strip()
        self.dismiss(
            Verdict(
                ran=level in {"ran", "works", "perfect"},
                worked=level in {"works", "perfect"},
                perfect=level == "perfect",
                comment=comment,
            )
        )
