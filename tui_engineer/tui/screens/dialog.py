"""The frame every dialog shares: a title, a body, its own widgets and a row of buttons."""

from __future__ import annotations

from typing import Any, TypeVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Static

from tui_engineer.base.names import readable

T = TypeVar("T")


class Dialog(ModalScreen[T]):
    """A centred box. Subclasses give `buttons` (id, label, variant) and may add `body_widgets`;
    a pressed button calls `on_choice(button_id)`. Escape cancels (`cancel_value`) where
    cancelling is safe; where every answer is a decision (`escape_decides = False`) Escape only
    says so: a stray key must not end a session or record a verdict."""

    DEFAULT_CSS = """
    Dialog { align: center middle; }
    Dialog > #dialog {
        width: 76; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    Dialog #dialog-title { text-style: bold; color: $primary; margin-bottom: 1; }
    Dialog #dialog-body { margin-bottom: 1; }
    Dialog #dialog-buttons { height: auto; margin-top: 1; }
    Dialog #dialog-buttons Button { margin-right: 1; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    title_text: str = ""
    buttons: list[tuple[str, str, str]] = []
    cancel_value: Any = None
    escape_decides: bool = True

    def __init__(self, body: str = "") -> None:
        super().__init__()
        self.body = readable(body)  # a file name in it may not be UTF-8

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(self.title_text, id="dialog-title")
            if self.body:
                yield Static(self.body, id="dialog-body", markup=False)
            yield from self.body_widgets()
            with Horizontal(id="dialog-buttons"):
                for button_id, label, variant in self.buttons:
                    yield Button(label, id=button_id, variant=variant)  # type: ignore[arg-type]

    def body_widgets(self) -> list[Widget]:
        return []

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.on_choice(event.button.id)

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id)  # type: ignore[arg-type]

    def action_cancel(self) -> None:
        if not self.escape_decides:
            self.notify("Choose one of the buttons: Escape decides nothing here.", timeout=3)
            return
        self.dismiss(self.cancel_value)
