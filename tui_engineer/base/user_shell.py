"""The human's own shell beside the chat (`!command`): run as the user, in the working tree,
never in the sandbox and never with the model's words.

Each command is one `bash -c` that ends by writing its `pwd` and `env -0` to a state file:
the next command starts there, so `cd` and `export` persist as in a terminal, while a command
that hangs or is stopped never leaves a shell process in a broken state behind it (a
persistent shell would need its prompt parsed back out of its output). Shell variables that
are not exported, aliases and functions do not carry over. What goes to the model is the
output's tail, with the values of secret-named variables (and the API key) masked.

Given a `TerminalScreen` (the TUI's Shell pane), the command runs on a pseudo-terminal of that
screen's size (pty_run.py): a program sees a terminal, reads what the human types (`write`),
and its output is emulated on the screen (terminal_screen.py, pyte); what the run keeps is the
screen's text at the end (scrollback and screen, escape-free). Without one (`run`'s `!`, ACP,
where nobody types into the program) output goes through a pipe and stdin is /dev/null: a
program that asks for input reads end of file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_engineer.base.escapes import without_escapes
from tui_engineer.base.pty_run import PtyCommand
from tui_engineer.base.secrets import mask_values, secret_values

if TYPE_CHECKING:  # the TUI's Shell pane gives one; headless and editors never load pyte
    from tui_engineer.base.terminal_screen import TerminalScreen

KEPT_CHARS = 200_000  # of a command's output kept on screen and for the model's tail
TAIL_CHARS = 6_000  # of the output's tail that goes to the model
STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL on stop
MASKED = "[masked]"
# Set by bash on each run, not by the user: carrying them over would be wrong (SHLVL, `_`).
_NOT_CARRIED = {"_", "SHLVL", "PWD"}

_SCRIPT = r"""
__tui_state=$1; __tui_command=$2; set --
trap '__tui_s=$?; pwd > "$__tui_state.pwd"; env -0 > "$__tui_state.env"; exit $__tui_s' EXIT
eval "$__tui_command"
"""


@dataclass
class ShellRun:
    """One finished command: what the Shell pane shows and what "send to the model" sends."""

    command: str
    output: str  # escapes taken out; its last KEPT_CHARS
    status: int | None  # the exit status; None when it was stopped
    cwd: str  # the folder it ran in
    secrets: tuple[str, ...] = ()
    ended: str = ""  # how it ended, when no exit status says it (a signal, in an editor)

    @property
    def outcome(self) -> str:
        if self.ended:
            return self.ended
        return "stopped" if self.status is None else f"exit status {self.status}"

    @property
    def summary(self) -> str:
        """One line for the chat: the command, how it ended, how much it printed."""
        lines = len(self.output.splitlines())
        return f"📎 $ {self.command} ({self.outcome}, {lines} lines of output, the tail sent)"

    def attachment(self, tail_chars: int = TAIL_CHARS) -> str:
        """The command line, its exit status and its output's tail, secrets masked."""
        head = f"{RAN} ({self.outcome}):\n$ {self.command}"
        return attachment_text(head, self.output, self.secrets, tail_chars)


def attachment_text(
    head: str, output: str, secrets: Iterable[str], tail_chars: int = TAIL_CHARS
) -> str:
    """`head`, then the output's tail as a terminal leaves it (a progress bar at its last
    state), secrets masked: what the model gets of a command, whichever shell ran it."""
    output = last_redraws(output).rstrip("\n")
    cut = ""
    if len(output) > tail_chars:
        output = output[-tail_chars:]
        output = output.split("\n", 1)[-1] if "\n" in output else output
        cut = "(earlier output left out; its last lines follow)\n"
    return mask_secrets(f"{head}\n{cut}{output or '(no output)'}", secrets)


# How every attachment of a command's output begins (ShellRun's, and acp/shell.py's from an
# editor's terminal): what precedes it in an answer are the human's own words.
RAN = "The human ran this command in the repository"
ATTACHED = "The human attached this from the editor's terminal"
ATTACHMENT_STARTS = (RAN, ATTACHED)


def own_words(answer: str) -> str:
    """The human's words in an answer that may carry a command's output after them (shown
    where the answer is named: the Plan pane's "you:" line, the record's steps); only the
    command line, when the output went alone."""
    cut = min((i for h in ATTACHMENT_STARTS if (i := answer.find(h)) >= 0), default=-1)
    if cut < 0:
        return answer.strip()
    words = answer[:cut].strip()
    if words:
        return words
    command = next((ln for ln in answer[cut:].splitlines() if ln.startswith("$ ")), "")
    return command or "(a command's output)"


def last_redraws(text: str) -> str:
    """Each line as a terminal leaves it: a progress bar redrawn after `\r` keeps its last."""
    return "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    return mask_values(text, secrets, MASKED)


class UserShell:
    """One per session of a front end: the folder and environment its commands share."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str] | None = None,
        *,
        secrets: Iterable[str | None] = (),
    ) -> None:
        self.cwd = str(cwd)
        self.env = dict(os.environ if env is None else env)
        self._extra_secrets = tuple(s for s in secrets if s)
        self._process: asyncio.subprocess.Process | None = None
        self._terminal: PtyCommand | None = None  # the running command's, on a terminal
        self._screen: TerminalScreen | None = None  # and what it shows
        self._stopped = False
        self._state: tempfile.TemporaryDirectory[str] | None = None  # removed at exit

    @property
    def running(self) -> bool:
        return self._process is not None

    async def run(
        self,
        command: str,
        on_output: Callable[[str], object] = print,
        *,
        terminal: TerminalScreen | None = None,
    ) -> ShellRun:
        """Run `command` to its end (or `stop()`), each chunk of output given to `on_output`
        (escapes taken out); on a pseudo-terminal emulated by `terminal` when one is given."""
        if self._process is not None:
            raise RuntimeError("a command is already running")
        if self._state is None:
            self._state = tempfile.TemporaryDirectory(prefix="tui-engineer-shell-")
        state = os.path.join(self._state.name, "last")
        for suffix in (".pwd", ".env"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(state + suffix)
        cwd = self.cwd if os.path.isdir(self.cwd) else os.path.expanduser("~")
        self._stopped = False
        argv = ("bash", "-c", _SCRIPT, "bash", state, command)
        if terminal is not None:
            self._terminal = await PtyCommand.start(
                argv, cwd=cwd, env=self.env, columns=terminal.columns, lines=terminal.lines
            )
            self._process, self._screen = self._terminal.process, terminal
            terminal.answer = self._terminal.write  # e.g. where the cursor is, when asked
        else:
            self._process = await asyncio.create_subprocess_exec(
                *argv, cwd=cwd, env=self.env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop reaches its children
            )  # fmt: skip
        kept = ""
        try:
            if self._terminal is not None and terminal is not None:
                code = await self._terminal.run(_shown_on(terminal, on_output))
                kept = terminal.text()[-KEPT_CHARS:]
            else:
                kept = await self._read(self._process, on_output)
                code = await self._process.wait()
        except asyncio.CancelledError:  # the session stopped (Ctrl-C): the command stops too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)
            raise
        finally:
            if terminal is not None:
                terminal.answer = None
            self._process = self._terminal = self._screen = None
        self._take_state(state)
        secrets = secret_values(self.env, self._extra_secrets)
        status = None if self._stopped else code
        return ShellRun(command, kept, status, cwd, secrets)

    async def _read(
        self, process: asyncio.subprocess.Process, on_output: Callable[[str], object]
    ) -> str:
        assert process.stdout is not None
        kept = ""
        while chunk := await process.stdout.read(65536):
            text = without_escapes(chunk.decode("utf-8", errors="replace").replace("\r\n", "\n"))
            kept = (kept + text)[-KEPT_CHARS:]
            on_output(text)
        return kept

    def write(self, data: bytes) -> None:
        """Typed into the running command (on a terminal only)."""
        if self._terminal is not None:
            self._terminal.write(data)

    def resize(self, columns: int, lines: int) -> None:
        """The running command's terminal and its screen take a new size (the pane's)."""
        if self._terminal is not None and self._screen is not None:
            self._screen.resize(columns, lines)
            self._terminal.resize(self._screen.columns, self._screen.lines)

    def _take_state(self, state: str) -> None:
        """The folder and environment the command left, for the next one."""
        try:
            cwd = Path(state + ".pwd").read_text(errors="replace").strip()
            env = Path(state + ".env").read_bytes()
        except OSError:
            return  # stopped before its end: the previous state stays
        if cwd:
            self.cwd = cwd
        pairs = (item.split("=", 1) for item in env.decode(errors="replace").split("\0") if item)
        self.env = {p[0]: p[1] for p in pairs if len(p) == 2 and p[0] not in _NOT_CARRIED}

    def stop(self) -> None:
        """Stop the running command and everything it started (SIGTERM, then SIGKILL)."""
        process = self._process
        if process is None:
            return
        self._stopped = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        asyncio.get_running_loop().call_later(STOP_GRACE, _kill, process)


def _shown_on(terminal: TerminalScreen, on_output: Callable[[str], object]):
    def shown(data: bytes) -> None:
        terminal.feed(data)
        on_output(without_escapes(data.decode("utf-8", errors="replace").replace("\r\n", "\n")))

    return shown


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
