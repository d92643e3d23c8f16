"""The Shell pane: the human's `!command` runs here, its output live, its exit status on top.
Hidden until the first command; then under the chat (wide) or a tab of its own (narrow).
`x` stops the command, `y` sends it to the model with the next message, `!` types another.
The output sent waits here (`attached`) until the next message takes it: chat during a fix
loop, a new request, or the answer to "What is still wrong?". A command the model suggests is
never run: only what the human typed after `!` (the session's screen starts it).

A command runs on a pseudo-terminal the size of the pane: while it runs the pane shows its
emulated screen (shell_terminal.py), so a REPL, `read`, a pager or a progress bar look as in
a terminal; when it ends, its text (scrollback and screen) joins the log above. `i`, Enter or
a click on its screen types into the program: every key goes to it (Ctrl-C and Ctrl-D too,
Esc for vim) until Ctrl-] leaves, the pane loses focus, or the command ends."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.markup import escape
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Log, Static

from tui_engineer.base.terminal_screen import TerminalScreen
from tui_engineer.base.user_shell import ShellRun, UserShell, last_redraws
from tui_engineer.tui.panes.shell_terminal import TerminalView
from tui_engineer.tui.panes.terminal_keys import key_bytes

MAX_LOG_LINES = 5_000  # older lines leave the pane (the model gets the tail anyway)
# Leaves "typing into the program". Not Esc: vim, less and readline need it.
LEAVE_KEY = "ctrl+right_square_bracket"
TYPING_TITLE = "Shell — typing into the program — Ctrl+] leaves"


class ShellPane(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ShellPane { padding: 0 1; }
    ShellPane > #shell-head { height: auto; color: $text-muted; }
    ShellPane > #shell-head.-failed { color: $error; }
    ShellPane > Log { height: 1fr; background: transparent; }
    ShellPane > TerminalView { display: none; }
    ShellPane.-running > TerminalView { display: block; }
    ShellPane.-running > Log { display: none; }
    /* One line while a command runs: the rows are its terminal's. */
    ShellPane.-running > #shell-head { height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    ShellPane.-typing { border: round $accent; }
    """
    BINDINGS = [
        Binding("i", "type_into", "Type into it"),
        Binding("enter", "type_into", "Type into it", show=False),
        Binding("x", "stop_command", "Stop"),
        Binding("y", "send_output", "Send to model"),
        Binding("exclamation_mark", "screen.shell", "New command"),
        # Shown while typing; the key itself is taken in `on_key` (every key goes there).
        Binding(LEAVE_KEY, "leave_typing", "Leave typing", key_display="^]"),
    ]

    class Finished(Message):
        """A command ended (or was stopped): the app says so and may attach it."""

        def __init__(self, run: ShellRun) -> None:
            super().__init__()
            self.run = run

    class SendAsked(Message):
        """`y`: the human wants the last command's output to go to the model."""

        def __init__(self, run: ShellRun) -> None:
            super().__init__()
            self.run = run

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.shell: UserShell | None = None  # made with the first command (its folder: the repo)
        self.last: ShellRun | None = None  # the last finished command
        self.sent = False  # `y` was pressed for `last`
        self.terminal: TerminalScreen | None = None  # the running command's screen
        self._busy = False  # from `start` to the command's end
        self._partial = ""  # without a terminal: output after its last line end
        self.typing = False  # keys go to the running program
        self.attached: ShellRun | None = None  # goes with the next message
        self.attach_when_done = False  # typed at "What is still wrong?": goes with the answer

    def compose(self) -> ComposeResult:
        yield Static("", id="shell-head")
        yield Log(max_lines=MAX_LOG_LINES, id="shell-log")
        yield TerminalView(id="shell-terminal")

    @property
    def running(self) -> bool:
        return self._busy

    @property
    def output_lines(self) -> list[str]:
        """The log's lines, then the running command's screen (its text so far)."""
        lines = list(self.query_one(Log).lines)
        if self.terminal is not None:
            lines += self.terminal.text().split("\n")
        return lines

    def start(self, command: str, repo: Path, *, terminal: bool = True) -> None:
        """Run `command` in the user's shell (made in `repo` the first time); on a terminal
        the pane's size, or (`terminal` False: typed in a dialog, which keeps the keys) with
        its output streamed to the log and no input, as `run`'s `!` does."""
        if self.shell is None:
            self.shell = UserShell(repo)
        self._busy = True
        self.query_one(Log).write_line(f"$ {command}")
        if terminal:
            self._head(self._running_head())
            self.terminal = TerminalScreen()
            self.query_one(TerminalView).show(self.terminal)
            self.add_class("-running")
        else:
            self._head(f"running in {escape(self.shell.cwd)}, without input — x stops it")
        self.run_worker(self._run(command, self.terminal), group="shell", exit_on_error=False)
        self.refresh_bindings()

    async def _run(self, command: str, terminal: TerminalScreen | None) -> None:
        assert self.shell is not None
        view, log = self.query_one(TerminalView), self.query_one(Log)
        if terminal is not None:
            laid_out = asyncio.get_running_loop().create_future()
            self.call_after_refresh(lambda: laid_out.done() or laid_out.set_result(None))
            await laid_out  # the pane just shown: the command starts with the view's size
            if view.size.area:
                terminal.resize(view.size.width, view.size.height)
        shown = self._write if terminal is None else lambda _text: view.refresh()
        try:
            run = await self.shell.run(command, shown, terminal=terminal)
        finally:  # ended, stopped, or it could not start: the pane is the log's again
            self._busy = False
            self.terminal = None
            self._leave_typing()
            self.remove_class("-running")
            view.show(None)
            self.refresh_bindings()
        if terminal is None and self._partial:
            log.write_line(last_redraws(self._partial))
            self._partial = ""
        elif terminal is not None and run.output:
            log.write_lines(run.output.split("\n"))
        self.last, self.sent = run, False
        failed = run.status != 0
        log.write_line(f"[{run.outcome}]")
        self._head(f"{run.outcome} — y sends it to the model", failed=failed)
        self.refresh_bindings()
        self.post_message(self.Finished(run))

    def _write(self, text: str) -> None:
        """Whole lines to the log as they come (a line's end may come in the next chunk)."""
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        if lines:
            self.query_one(Log).write_lines(last_redraws(line) for line in lines)

    @on(TerminalView.Resized)
    def _resized(self, message: TerminalView.Resized) -> None:
        if self.terminal is None:
            return
        if self.shell is not None and self.shell.running:  # its pseudo-terminal too
            self.shell.resize(message.columns, message.lines)
        else:  # not started yet: it starts with this size
            self.terminal.resize(message.columns, message.lines)
        self.query_one(TerminalView).refresh()

    def _head(self, text: str, *, failed: bool = False) -> None:
        head = self.query_one("#shell-head", Static)
        head.update(text)
        head.set_class(failed, "-failed")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_typing":
            return self.typing
        if self.typing:  # every key goes to the program: only the way out is shown
            return False
        if action == "type_into":
            return self.terminal is not None
        if action == "stop_command":
            return self.running
        if action == "send_output":  # shown once per command
            return None if self.running or self.last is None or self.sent else True
        return True

    # -- typing into the running program ---------------------------------------------------

    def action_type_into(self) -> None:
        if self.terminal is None or self.typing:
            return
        self.typing = True
        self.query_one(TerminalView).show_cursor = True
        self.query_one(TerminalView).refresh()
        self.add_class("-typing")
        self.border_title = TYPING_TITLE
        self._head_typing()
        self.refresh_bindings()

    def action_leave_typing(self) -> None:
        self._leave_typing()

    def _leave_typing(self) -> None:
        if not self.typing:
            return
        self.typing = False
        self.query_one(TerminalView).show_cursor = False
        self.query_one(TerminalView).refresh()
        self.remove_class("-typing")
        self.border_title = "Shell"
        if self.running:
            self._head(self._running_head())
        self.refresh_bindings()

    def _running_head(self) -> str:
        cwd = escape(self.shell.cwd) if self.shell is not None else ""
        return f"i types into it, x stops it — running in {cwd}"

    def _head_typing(self) -> None:
        # The way out first: a narrow pane cuts the line's end.
        self._head("Ctrl+] leaves — every key goes to the program, Ctrl-C too")

    def on_key(self, event: events.Key) -> None:
        if not self.typing:
            return
        event.stop()
        event.prevent_default()
        if event.key == LEAVE_KEY:
            self._leave_typing()
            return
        if self.shell is not None and self.terminal is not None:
            data = key_bytes(event, application_cursor=self.terminal.application_cursor)
            if data:
                self.shell.write(data)

    def on_paste(self, event: events.Paste) -> None:
        if not self.typing or self.shell is None or self.terminal is None:
            return
        event.stop()
        text = event.text.replace("\r\n", "\r").replace("\n", "\r")
        if self.terminal.bracketed_paste:  # the program asked to tell a paste from typing
            text = f"\x1b[200~{text}\x1b[201~"
        self.shell.write(text.encode())

    def on_blur(self) -> None:
        self._leave_typing()

    @on(events.Click, "TerminalView")
    def _clicked(self) -> None:
        """A click on the running command's screen types into it, as in a terminal."""
        if self.running:
            self.focus()
            self.action_type_into()

    def action_stop_command(self) -> None:
        if self.shell is not None:
            self.shell.stop()

    def action_send_output(self) -> None:
        if self.last is None or self.running:
            return
        self.sent = True
        self.refresh_bindings()
        self.post_message(self.SendAsked(self.last))

    # -- the output sent with the next message ---------------------------------------------

    def attached_line(self) -> str:
        """What is attached to the next message ("" when nothing)."""
        return attachment_line(self.attached) if self.attached else ""

    def take_attached(self) -> str:
        """The attachment's text for the model ("" when nothing), taken: it goes once."""
        run, self.attached = self.attached, None
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
