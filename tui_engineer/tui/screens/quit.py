"""Ask before quitting while a step is under way."""

from __future__ import annotations

from textual.binding import Binding

from tui_engineer.tui.screens.dialog import Dialog


class QuitScreen(Dialog[bool]):
    """Result: True to quit. The quit key pressed again quits: Ctrl+C reaches the app's own
    binding (a priority one); `q`, like every app key, stops at a modal screen, so it is bound
    here too."""

    BINDINGS = [Binding("q", "quit_now", "Quit", show=False)]

    title_text = "Quit while work is in flight?"
    buttons = [("quit", "Quit", "error"), ("stay", "Stay", "primary")]
    cancel_value = False

    def __init__(self, doing: str) -> None:
        super().__init__(
            f"{doing}\n\nQuitting stops it and removes the shadow worktree. Steps you accepted "
            "stay committed and your files are untouched; `--resume` goes on from here later "
            "(a proposal under review is shown again).\nq or Ctrl+C again quits."
        )

    def on_choice(self, button_id: str) -> None:
        self.dismiss(button_id == "quit")

    def action_quit_now(self) -> None:
        self.dismiss(True)
