"""The human's shell beside the chat: `!command` in the chat box (or at "What is still
wrong?") runs it in the Shell pane (tui/panes/shell.py), as the user, in the working tree,
never in the sandbox; `y` there attaches its output to the next message: chat during a fix
loop, a new request, or the answer to "What is still wrong?". A command the model suggests is
never run: only what the human typed after `!`."""

from __future__ import annotations

from collections.abc import Callable

from textual.screen import Screen
from textual.widgets import Tab, Tabs

from tui_engineer.base.user_shell import ShellRun
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.panes.chat import ChatInput, ChatPane
from tui_engineer.tui.panes.shell import ShellPane

SHELL_PREFIX = "!"


class ShellActions:
    """Mixed into `TuiEngineerApp` (before `App`): its `on_` handlers hear the Shell pane's
    messages and the narrow layout's tabs; the `!` key itself is bound on the app."""

    options: RunOptions
    chat: ChatPane
    chat_input: ChatInput
    shell_pane: ShellPane
    screen_stack: list[Screen]
    screen: Screen
    notify: Callable[..., None]
    call_after_refresh: Callable[..., bool]
    shell_attached: ShellRun | None = None  # goes with the next message
    _attach_when_done = False  # typed at "What is still wrong?": goes with the answer

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
        self._attach_when_done = attach
        self._show_shell()
        self.shell_pane.start(command, self.options.repo)

    def _show_shell(self) -> None:
        """The pane appears under the chat (wide) or as a tab of its own (narrow)."""
        base = self.screen_stack[0]
        base.add_class("-shell")
        self.shell_pane.border_title = "Shell"
        tabs = base.query_one("#pane-tabs", Tabs)
        if not tabs.query("#tab-shell"):
            tabs.add_tab(Tab("Shell", id="tab-shell"))
        if base.has_class("-narrow"):
            tabs.active = "tab-shell"
        if len(self.screen_stack) == 1:  # not under a dialog
            self.shell_pane.focus()

    def action_shell(self) -> None:
        """`!`: the chat box, a `!` typed in it, for a command."""
        if self.screen_stack[0].has_class("-narrow"):
            self.screen_stack[0].query_one("#pane-tabs", Tabs).active = "tab-chat"
        self.chat_input.focus()
        # After the focus, which selects the box's text (a typed key would replace the `!`).
        self.call_after_refresh(self._type_prefix)

    def _type_prefix(self) -> None:
        self.chat_input.value = SHELL_PREFIX
        self.chat_input.cursor_position = len(SHELL_PREFIX)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        # The other panes' `-active` are set by the app's own handler (PANES).
        if event.tabs.id == "pane-tabs":
            self.shell_pane.set_class(event.tab.id == "tab-shell", "-active")

    async def on_shell_pane_finished(self, message: ShellPane.Finished) -> None:
        run = message.run
        lines = len(run.output.splitlines())
        if self._attach_when_done:
            self._attach_when_done = False
            await self._attach(run)
            return
        await self.chat.note(
            f"$ {run.command} — {run.outcome}, {lines} lines: y in the Shell pane sends it "
            "to the model."
        )

    async def on_shell_pane_send_asked(self, message: ShellPane.SendAsked) -> None:
        await self._attach(message.run)
        self.chat_input.focus()

    async def _attach(self, run: ShellRun) -> None:
        self.shell_attached = run
        line = attachment_line(run)
        await self.chat.note(f"{line} — goes to the model with your next message.")
        said = getattr(self.screen, "shell_said", None)
        if said is not None:  # "What is still wrong?" is open: it says what goes with it
            said(line)

    def attached_line(self) -> str:
        """What is attached to the next message ("" when nothing)."""
        return attachment_line(self.shell_attached) if self.shell_attached else ""

    def take_attached(self) -> str:
        """The attachment's text for the model ("" when nothing), taken: it goes once."""
        run, self.shell_attached = self.shell_attached, None
        return run.attachment() if run is not None else ""

    def with_attached(self, text: str) -> tuple[str, str]:
        """(what the model gets, what the chat shows) for a message typed in the chat box."""
        line = self.attached_line()
        attachment = self.take_attached()
        if not attachment:
            return text, text
        return f"{text}\n\n{attachment}", f"{text}\n{line}"


def attachment_line(run: ShellRun) -> str:
    lines = len(run.output.splitlines())
    return f"📎 $ {run.command} ({run.outcome}, {lines} lines of output, the tail sent)"
