"""The layout keys: which pane shows (one tab at a time below 110 columns), the side columns'
widths and whether Files shows (remembered), a pane filling the screen, the split diff, the
chat box."""

from __future__ import annotations

from pathlib import Path

from textual.widget import Widget
from textual.widgets import Tabs

from tui_engineer.tui.layout import STEP, PaneSizes, save_sizes
from tui_engineer.tui.panes.chat import ChatInput
from tui_engineer.tui.panes.diff_view import DiffView

PANES = [
    ("tree", "Files"),
    ("plan", "Plan"),
    ("diff", "Diff"),
    ("tests", "Tests"),
    ("chat", "Chat"),
]


class PaneActions:
    """Mixed into `TuiEngineerApp`; the key bindings themselves stay on the app, where Textual
    collects them, and so does `check_action` (which of these the footer shows)."""

    sizes: PaneSizes
    layout_file: Path | None
    diff: DiffView
    chat_input: ChatInput

    def _show_pane(self, key: str) -> None:
        """Narrow terminals show one pane at a time (the tabs); wide ones show them all."""
        if self.screen_stack:
            self.screen_stack[0].query_one(Tabs).active = f"tab-{key}"  # -> _tab_activated

    def action_toggle_split(self) -> None:
        self.diff.toggle_split()

    def _resize_sizes(self, sizes: PaneSizes) -> None:
        self.sizes = sizes
        self.apply_layout()
        if self.layout_file is not None:
            save_sizes(sizes, self.layout_file)

    def _focused_pane(self) -> Widget | None:
        node = self.screen_stack[0].focused if self.screen_stack else None
        while node is not None and not (isinstance(node, Widget) and node.has_class("pane")):
            node = node.parent
        return node if isinstance(node, Widget) else None

    def action_maximize_pane(self) -> None:
        """The focused pane fills the screen (Textual's maximize); again (or Escape) restores."""
        screen = self.screen_stack[0]
        if screen.maximized is not None:
            screen.minimize()
            return
        pane = self._focused_pane() or self.diff
        screen.maximized = pane  # set directly: containers do not allow maximize themselves

    def action_toggle_files(self) -> None:
        shown = self.sizes.shows_files(self.size.width)
        self._resize_sizes(PaneSizes(self.sizes.files_width, self.sizes.chat_width, not shown))

    def action_resize_side(self, direction: int) -> None:
        """The focused side column (Files, or else Chat) wider or narrower."""
        pane = self._focused_pane()
        side = "files" if pane is not None and pane.id == "pane-tree" else "chat"
        self._resize_sizes(self.sizes.resized(side, direction * STEP))

    def action_switch_pane(self, direction: int) -> None:
        """Narrow terminals: the previous or next tab."""
        tabs = self.screen_stack[0].query_one(Tabs)
        keys = [key for key, _ in PANES]
        now = (tabs.active or "tab-diff").removeprefix("tab-")
        key = keys[(keys.index(now) + direction) % len(keys)] if now in keys else "diff"
        self._show_pane(key)

    def action_focus_chat(self) -> None:
        self.chat_input.focus()
        if self.screen.has_class("-narrow"):
            self._show_pane("chat")
