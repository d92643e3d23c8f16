"""The session's screen: the panes, their layout, and the keys that work whatever pane has the
focus (the review's decisions, the layout keys). Each key's work is done by the pane whose
state it changes (the Diff pane accepts what it holds, the Plan pane edits the plan, the Tests
pane runs the tests, the status bar switches the approval mode); the screen holds the bindings
so that the keys work, and the footer lists them, wherever the focus is. A pane's own keys
(the Diff pane's hunk keys, the Shell pane's stop and send) are bound on the pane.

The layout: which pane shows (one tab at a time below 110 columns), the side columns' widths
and whether Files shows (remembered), a pane filling the screen, the split diff, the chat box.
"""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Container, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Tab, Tabs

from tui_engineer.base.user_shell import ShellRun
from tui_engineer.tui.answering import Say, reviewing_now
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.footer import KeyFooter
from tui_engineer.tui.layout import (
    STEP,
    TESTS_ROWS,
    PaneSizes,
    load_sizes,
    plan_rows,
    save_sizes,
)
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.chat_input import ChatInput
from tui_engineer.tui.panes.diff_pane import DiffPane
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.shell import ShellPane, attachment_line
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.panes.test_output import TestOutputPane

PANES = [
    ("tree", "Files"),
    ("plan", "Plan"),
    ("diff", "Diff"),
    ("tests", "Tests"),
    ("chat", "Chat"),
]

# When the keys do not fit the footer (80 columns in a review), these give way first to last;
# Quit and the focused widget's own keys (esc Back to diff...) always show. All still work and
# the command palette (^p) lists them.
FOOTER_DROP_ORDER = [
    "toggle_file",
    "previous_hunk",
    "switch_approval",
    "toggle_split",
    "maximize_pane",
    "undo",
    "retry",
    "run_tests",
    "comment",
    "edit_by_hand",
    "toggle_files",
    "focus_chat",
    "edit_plan",
    "next_hunk",
    "toggle_hunk",
    "switch_pane",
    "skip",
    "reject",
    "accept",
]


REVIEW_ACTIONS = {"accept", "reject", "skip", "edit_plan"}


class SessionScreen(Screen[None]):
    """The app's first screen, under every dialog. `layout_file`: where the pane sizes are
    remembered (None: the defaults, for pictures and tests)."""

    BINDINGS = [
        Binding("a", "accept", "Accept"),
        Binding("r", "reject", "Reject"),
        Binding("s", "skip", "Skip"),
        Binding("e", "edit_plan", "Edit plan"),
        Binding("u", "undo", "Undo"),
        # Shown only while paused on a model server that went away (never with Reject).
        Binding("r", "retry", "Retry now"),
        Binding("t", "run_tests", "Run tests"),
        Binding("d", "toggle_split", "Split diff"),
        Binding("c", "focus_chat", "Chat"),
        Binding("f", "maximize_pane", "Full pane"),
        Binding("b", "toggle_files", "Files"),
        Binding("m", "switch_approval", "Mode"),
        Binding("minus", "resize_side(-1)", "Narrower", show=False),
        Binding("plus,equals_sign", "resize_side(1)", "Wider", show=False),
        Binding("less_than_sign", "switch_pane(-1)", "Prev pane"),
        Binding("greater_than_sign", "switch_pane(1)", "Next pane"),
        Binding("exclamation_mark", "shell", "Shell", show=False),
    ]

    def __init__(
        self,
        controller: SessionController,
        repo: Path,
        *,
        deterministic: bool,
        layout_file: Path | None,
    ) -> None:
        super().__init__(id="_default")
        self.controller = controller
        self.repo = repo  # undone in when no session runs
        self.deterministic = deterministic
        self.layout_file = layout_file
        self.sizes = PaneSizes()
        self.plan_pane = PlanPane(id="pane-plan", classes="pane")
        self.chat = ChatPane(deterministic=deterministic, id="pane-chat", classes="pane")
        self.diff = DiffPane(controller, id="pane-diff", classes="pane")
        self.test_pane = TestOutputPane(
            deterministic=deterministic, id="pane-tests", classes="pane"
        )
        self.chat_input = ChatInput(
            placeholder="What do you want done? (Enter sends)", id="chat-input"
        )
        # A blinking cursor would make pictures depend on the moment they are taken.
        self.chat_input.cursor_blink = not deterministic
        self.shell_pane = ShellPane(id="pane-shell", classes="pane")
        self.status = StatusBar(deterministic=deterministic, id="status")

    def compose(self) -> ComposeResult:
        yield Tabs(*(Tab(label, id=f"tab-{key}") for key, label in PANES), id="pane-tabs")
        with Container(id="panes"):
            yield Vertical(id="pane-tree", classes="pane")
            yield self.plan_pane
            yield self.chat
            yield self.diff
            yield self.test_pane
            yield self.shell_pane  # hidden until the first `!command`
        yield self.chat_input
        yield self.status
        yield KeyFooter(FOOTER_DROP_ORDER)

    def on_mount(self) -> None:
        for key, title in PANES:
            self.query_one(f"#pane-{key}").border_title = title
        if self.layout_file is not None:
            self.sizes = load_sizes(self.layout_file)
        self.apply_layout()
        self.show_pane("diff")

    async def on_say(self, message: Say) -> None:
        await self.chat.note(message.text, error=message.error)

    # ----- layout

    def apply_layout(self) -> None:
        """Column widths, Files shown or not, and the plan pane's height for its steps."""
        columns = self.app.size.width
        self.set_class(not self.sizes.shows_files(columns), "-no-files")
        panes = self.query_one("#panes")
        panes.styles.grid_columns = self.sizes.grid_columns(columns)
        panes.styles.grid_rows = f"{plan_rows(self.plan_pane.lines)} 1fr {TESTS_ROWS}"

    def on_resize(self) -> None:
        self.apply_layout()

    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    # ----- the keys that answer the engine: each is done by the pane it changes

    def action_accept(self) -> None:
        self.diff.accept()

    def action_reject(self) -> None:
        self.diff.reject()

    def action_skip(self) -> None:
        self.diff.skip()

    def action_edit_plan(self) -> None:
        self.plan_pane.edit_plan(self.controller)

    def action_undo(self) -> None:
        self.plan_pane.undo(self.controller, self.repo)

    def action_run_tests(self) -> None:
        self.test_pane.run_tests(self.controller)

    def action_switch_approval(self) -> None:
        self.status.switch_approval(self.controller)

    def action_retry(self) -> None:
        self.status.retry(self.controller)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Which keys the footer shows, and which of them are dimmed (None)."""
        if self.shell_pane.typing:  # every key goes to its program: only the way out is shown
            return False
        controller = self.controller
        if action == "retry":
            return controller.server_paused
        if action in REVIEW_ACTIONS and controller.server_paused:
            return False  # `r` is Retry meanwhile
        if action in REVIEW_ACTIONS:
            return True if reviewing_now(controller, self.app) else None
        if action == "undo":
            return self.plan_pane.undo_possible(controller)
        if action == "switch_approval":
            return True if controller.ready else None  # the settings' mode is known once ready
        if action == "run_tests":  # pressable in a session: when it cannot run now, it says why
            return True if controller.session is not None else None
        return self._check_layout(action)

    def _check_layout(self, action: str) -> bool | None:
        # Layout keys show in the footer only where they do something: tabs when narrow,
        # column sizes when wide.
        if action == "switch_pane":
            return self.narrow
        if action in {"toggle_files", "resize_side"}:
            return not self.narrow
        if action == "toggle_split":
            return self.diff.showing_diff  # a file's plain content never splits
        return True

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        # Only classes here: setting Tabs.active again would ping-pong with stale events.
        key = (event.tab.id or "").removeprefix("tab-")
        for pane_key, _ in PANES:
            self.query_one(f"#pane-{pane_key}").set_class(pane_key == key, "-active")
        self.shell_pane.set_class(key == "shell", "-active")

    def show_pane(self, key: str) -> None:
        """Narrow terminals show one pane at a time (the tabs); wide ones show them all."""
        self.query_one(Tabs).active = f"tab-{key}"  # -> _tab_activated

    def action_toggle_split(self) -> None:
        self.diff.toggle_split()

    def _resize_sizes(self, sizes: PaneSizes) -> None:
        self.sizes = sizes
        self.apply_layout()
        if self.layout_file is not None:
            save_sizes(sizes, self.layout_file)

    def _focused_pane(self) -> Widget | None:
        node = self.focused
        while node is not None and not (isinstance(node, Widget) and node.has_class("pane")):
            node = node.parent
        return node if isinstance(node, Widget) else None

    def action_maximize_pane(self) -> None:
        """The focused pane fills the screen (Textual's maximize); again (or Escape) restores."""
        if self.maximized is not None:
            self.minimize()
            return
        pane = self._focused_pane() or self.diff
        self.maximized = pane  # set directly: containers do not allow maximize themselves

    def action_toggle_files(self) -> None:
        shown = self.sizes.shows_files(self.app.size.width)
        self._resize_sizes(PaneSizes(self.sizes.files_width, self.sizes.chat_width, not shown))

    def action_resize_side(self, direction: int) -> None:
        """The focused side column (Files, or else Chat) wider or narrower."""
        pane = self._focused_pane()
        side = "files" if pane is not None and pane.id == "pane-tree" else "chat"
        self._resize_sizes(self.sizes.resized(side, direction * STEP))

    def action_switch_pane(self, direction: int) -> None:
        """Narrow terminals: the previous or next tab."""
        tabs = self.query_one(Tabs)
        keys = [key for key, _ in PANES]
        now = (tabs.active or "tab-diff").removeprefix("tab-")
        key = keys[(keys.index(now) + direction) % len(keys)] if now in keys else "diff"
        self.show_pane(key)

    def action_focus_chat(self) -> None:
        self.chat_input.focus()
        if self.narrow:
            self.show_pane("chat")

    # ----- the human's shell: `!command` runs in the Shell pane, as the user, never sandboxed

    def run_shell(self, command: str, *, attach: bool = False) -> None:
        """Run what the human typed after `!`; `attach`: its output goes with the next answer
        without `y` (typed at the question, as headless does)."""
        command = command.strip()
        if not command:
            self.notify("Type a command after !, e.g. !python -m pytest -x", severity="warning")
            return
        if self.shell_pane.running:
            self.notify("A command is running: x in the Shell pane stops it.", severity="warning")
            return
        self.shell_pane.attach_when_done = attach
        self._show_shell()
        self.shell_pane.start(command, self.repo, terminal=not attach)  # a dialog keeps the keys

    def _show_shell(self) -> None:
        """The pane appears under the chat (wide) or as a tab of its own (narrow)."""
        self.add_class("-shell")
        self.shell_pane.border_title = "Shell"
        tabs = self.query_one("#pane-tabs", Tabs)
        if not tabs.query("#tab-shell"):
            tabs.add_tab(Tab("Shell", id="tab-shell"))
        if self.narrow:
            tabs.active = "tab-shell"
        if self.app.screen is self:  # not under a dialog
            self.shell_pane.focus()

    def action_shell(self) -> None:
        """`!`: the chat box, a `!` typed in it, for a command."""
        if self.narrow:
            self.show_pane("chat")
        self.chat_input.focus()
        # After the focus, which selects the box's text (a typed key would replace the `!`).
        self.call_after_refresh(self.chat_input.start_command)

    async def on_shell_pane_finished(self, message: ShellPane.Finished) -> None:
        run = message.run
        if self.shell_pane.attach_when_done:
            self.shell_pane.attach_when_done = False
            await self._attach_run(run)
            return
        lines = len(run.output.splitlines())
        await self.chat.note(
            f"$ {run.command} — {run.outcome}, {lines} lines: y in the Shell pane sends it "
            "to the model."
        )

    async def on_shell_pane_send_asked(self, message: ShellPane.SendAsked) -> None:
        await self._attach_run(message.run)
        self.chat_input.focus()

    async def _attach_run(self, run: ShellRun) -> None:
        self.shell_pane.attached = run
        line = attachment_line(run)
        await self.chat.note(f"{line} — goes to the model with your next message.")
        said = getattr(self.app.screen, "shell_said", None)
        if said is not None:  # "What is still wrong?" is open: it says what goes with it
            said(line)

    def attached_line(self) -> str:
        return self.shell_pane.attached_line()

    def take_attached(self) -> str:
        return self.shell_pane.take_attached()
