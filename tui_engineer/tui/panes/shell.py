"""The Shell pane: the human's `!command` runs here, its output live, its exit status on top.
Hidden until the first command; then under the chat (wide) or a tab of its own (narrow).
`x` stops the command, `y` sends it to the model with the next message, `!` types another.
The output sent waits here (`attached`) until the next message takes it: chat during a fix
loop, a new request, or the answer to "What is still wrong?". A command the model suggests is
never run: only what the human typed after `!` (the session's screen starts it)."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Log, Static

from tui_engineer.base.user_shell import ShellRun, UserShell, last_redraws

MAX_LOG_LINES = 5_000  # older lines leave the pane (the model gets the tail anyway)


class ShellPane(Vertical, can_focus=True):
    DEFAULT_CSS = """
    ShellPane { padding: 0 1; }
    ShellPane > #shell-head { height: auto; color: $text-muted; }
    ShellPane > #shell-head.-failed { color: $error; }
    ShellPane > Log { height: 1fr; background: transparent; }
    """
    BINDINGS = [
        Binding("x", "stop_command", "Stop"),
        Binding("y", "send_output", "Send to model"),
        Binding("exclamation_mark", "screen.shell", "New command"),
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
        self._partial = ""  # output after its last line end
        self.attached: ShellRun | None = None  # goes with the next message
        self.attach_when_done = False  # typed at "What is still wrong?": goes with the answer

    def compose(self) -> ComposeResult:
        yield Static("", id="shell-head")
        yield Log(max_lines=MAX_LOG_LINES, id="shell-log")

    @property
    def running(self) -> bool:
        return self.shell is not None and self.shell.running

    @property
    def output_lines(self) -> list[str]:
        return list(self.query_one(Log).lines)

    def start(self, command: str, repo: Path) -> None:
        """Run `command` in the user's shell (made in `repo` the first time)."""
        if self.shell is None:
            self.shell = UserShell(repo)
        log = self.query_one(Log)
        log.write_line(f"$ {command}")
        self._head(f"running in {escape(self.shell.cwd)} — x stops it")
        self.run_worker(self._run(command), group="shell", exit_on_error=False)
        self.refresh_bindings()

    async def _run(self, command: str) -> None:
        assert self.shell is not None
        log = self.query_one(Log)
        run = await self.shell.run(command, self._write)
        if self._partial:
            log.write_line(last_redraws(self._partial))
            self._partial = ""
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

    def _head(self, text: str, *, failed: bool = False) -> None:
        head = self.query_one("#shell-head", Static)
        head.update(text)
        head.set_class(failed, "-failed")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_command":
            return self.running
        if action == "send_output":  # shown once per command
            return None if self.running or self.last is None or self.sent else True
        return True

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
