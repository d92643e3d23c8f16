"""The chat box, under the panes: a message for the model (sent with its next call), a new
request, or a `!command` for the human's own shell (the Shell pane)."""

from __future__ import annotations

from textual.binding import Binding
from textual.widgets import Input

SHELL_PREFIX = "!"


class ChatInput(Input):
    """The message box. Escape leaves it so the review keys (a, r, s...) work again. While it
    has focus the footer hides the letter keys (they type), so it shows how to get them back."""

    BINDINGS = [Binding("escape", "leave", "Leave the box (keys)")]

    # The `!` the `!` key types for a command is kept when the focus lands after it: an Input
    # selects its text on focus, and in a real terminal the focus can come after the `!` is in,
    # so the command typed next replaced it and went to the model as chat (tmux walk:
    # tests/tui/test_shell_tmux.py).
    @property
    def select_on_focus(self) -> bool:
        return self._select_on_focus and self.value != SHELL_PREFIX

    @select_on_focus.setter
    def select_on_focus(self, value: bool) -> None:
        self._select_on_focus = value

    def action_leave(self) -> None:
        # Back to the diff, where a review happens (next in focus order if it is hidden).
        diff = self.screen.query("#pane-diff")
        if diff and diff.first().display and diff.first().can_focus:
            diff.first().focus()
        else:
            self.app.action_focus_next()

    def start_command(self) -> None:
        """`!`: the box holds a `!`, the cursor after it, for a command of the human's own."""
        self.value = SHELL_PREFIX
        self.cursor_position = len(SHELL_PREFIX)
