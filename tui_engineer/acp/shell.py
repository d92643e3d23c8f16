"""The human's shell over ACP: the editor's own terminal. Two ways a command's output reaches
the model, both as the app's `y` sends it (the command, how it ended, the output's tail, secrets
masked), with the human's next message:

- terminal output the editor attaches to a prompt (Zed's "add to thread" of a terminal
  selection is an embedded resource `zed:///agent/terminal-selection?lines=N`; any resource
  whose URI names a terminal is taken the same way): its text is the output;
- `!command` as a prompt: run in the editor's terminal where the client offers terminals
  (`terminal/create`, shown live in the thread as the tool call's terminal, read back with
  `terminal/output` once it exits), else in the human's shell beside the agent
  (base/user_shell.py). Its output goes with the next prompt. A command the model suggests is
  never run: only what the human typed after `!`."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from acp.interfaces import Client
from acp.schema import (
    ContentToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
)

from tui_engineer.base.secrets import secret_values
from tui_engineer.base.user_shell import (
    ATTACHED,
    KEPT_CHARS,
    TAIL_CHARS,
    ShellRun,
    UserShell,
    attachment_text,
    last_redraws,
)

SHELL_PREFIX = "!"
TYPE_ONE = "Type a command after !, e.g. !python -m pytest -x"
# A prompt line a terminal selection may start with: `$ pytest -x` (bash), `% …` (zsh), `❯ …`.
_PROMPT_LINE = re.compile(r"^\s*(?:\S*[$%❯#>])\s+(\S.*)$")


def shell_command(prompt: str) -> str:
    """The command of a `!` prompt: its first block only (a file the editor attached to the
    prompt comes after a blank line, and is never part of what runs)."""
    return prompt.lstrip()[len(SHELL_PREFIX) :].split("\n\n", 1)[0].strip()


def is_terminal_uri(uri: str) -> bool:
    """A resource that is a terminal's output: its scheme or a segment of its path says
    `terminal` (zed:///agent/terminal-selection, terminal://1, vscode-terminal:/...); a file
    or a web page is never one, whatever its path says."""
    parts = urlsplit(uri)
    if parts.scheme in ("file", "", "http", "https"):  # a file, or a page the editor fetched
        return False
    if "terminal" in parts.scheme.lower():
        return True
    return any(seg.lower().startswith("terminal") for seg in parts.path.split("/"))


def terminal_attachment(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """The model's attachment for output the editor took from its terminal: the command when
    the selection starts at its prompt line; an exit status is never given by the editor."""
    secrets = secret_values(os.environ) if secrets is None else secrets
    first, _, rest = text.lstrip("\n").partition("\n")
    found = _PROMPT_LINE.match(first)
    if found:
        head = f"{ATTACHED} (its exit status not given):\n$ {found.group(1).strip()}"
        return attachment_text(head, rest, secrets)
    head = f"{ATTACHED} (the command and its exit status not given):"
    return attachment_text(head, text, secrets)


class ShellCommands:
    """Mixed into AcpSession: `!command` prompts, and the attachment the next prompt takes."""

    id: str
    client: Client
    say: Callable[[str], None]
    _outbox: asyncio.Queue[Any]
    cwd: str = "."
    terminals = False  # the client offers terminal/create and its kin
    shell_attached: ShellRun | None = None  # goes with the next prompt
    _user_shell: UserShell | None = None  # made with the first command run here
    _shell_task: asyncio.Task[ShellRun] | None = None
    _shell_calls = 0

    async def shell(self, command: str) -> str:
        """A `!command` prompt's turn: run it, show it, hold its output for the next prompt."""
        if not command:
            self.say(TYPE_ONE)
            return "end_turn"
        if self._shell_task is not None and not self._shell_task.done():
            self.say("A command is running: cancel the turn to stop it.")
            return "end_turn"
        self._shell_calls += 1
        call_id = f"shell-{self._shell_calls}"
        run_it = self._in_editor if self.terminals else self._beside
        self._shell_task = task = asyncio.ensure_future(run_it(command, call_id))
        try:
            run = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise  # the prompt itself was cancelled, not the command
            self._put(_ended(call_id, "failed", "Stopped (the turn was cancelled)."))
            await self._flushed()
            return "cancelled"
        self.shell_attached = run
        self.say(f"{run.summary} — goes to the model with your next message.")
        await self._flushed()
        return "end_turn"

    async def stop_shell(self) -> bool:
        """session/cancel during a `!command`: it stops (the editor's terminal killed)."""
        task = self._shell_task
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return True

    def with_attached(self, text: str) -> str:
        """The prompt as the model gets it: the held command output after the human's words."""
        run, self.shell_attached = self.shell_attached, None
        return f"{text}\n\n{run.attachment()}" if run is not None else text

    async def _in_editor(self, command: str, call_id: str) -> ShellRun:
        """In the editor's terminal (bash -c, in the session's folder), shown live in the thread;
        its output read back once it exits."""
        client, session = self.client, self.id
        made = await client.create_terminal(
            session_id=session, command="bash", args=["-c", command], cwd=self.cwd,
            output_byte_limit=KEPT_CHARS,
        )  # fmt: skip
        terminal = made.terminal_id
        shown = TerminalToolCallContent(type="terminal", terminal_id=terminal)
        self._put(_started(call_id, command, [shown]))
        try:
            await client.wait_for_terminal_exit(session_id=session, terminal_id=terminal)
            out = await client.terminal_output(session_id=session, terminal_id=terminal)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await client.kill_terminal(session_id=session, terminal_id=terminal)
            raise
        finally:
            with contextlib.suppress(Exception):  # the editor keeps showing what it printed
                await client.release_terminal(session_id=session, terminal_id=terminal)
        code = out.exit_status.exit_code if out.exit_status else None
        signal = out.exit_status.signal if out.exit_status else None
        ended = f"ended by {signal}" if signal else "" if code is not None else "exit unknown"
        run = ShellRun(command, out.output, code, self.cwd, secret_values(os.environ), ended)
        status = "completed" if code == 0 else "failed"
        self._put(_ended(call_id, status, run.outcome, (shown,)))  # the terminal kept in view
        return run

    async def _beside(self, command: str, call_id: str) -> ShellRun:
        """The editor offers no terminal: the human's shell beside the agent, as `run`'s `!`
        (cd and export kept between commands); its tail shown in the thread when it ends."""
        if self._user_shell is None:
            self._user_shell = UserShell(self.cwd)
        self._put(_started(call_id, command, []))
        run = await self._user_shell.run(command, lambda _chunk: None)  # a cancel stops it
        tail = last_redraws(run.output).rstrip("\n")[-TAIL_CHARS:]
        said = f"{run.outcome}\n```\n{tail}\n```" if tail else run.outcome
        self._put(_ended(call_id, "completed" if run.status == 0 else "failed", said))
        return run

    def _put(self, update: Any) -> None:
        self._outbox.put_nowait(update)

    async def _flushed(self) -> None:
        await self._outbox.join()


def _started(call_id: str, command: str, content: list[Any]) -> ToolCallStart:
    return ToolCallStart(
        session_update="tool_call", tool_call_id=call_id, title=f"$ {command}", kind="execute",
        status="in_progress", content=content or None,
    )  # fmt: skip


def _ended(call_id: str, status: str, said: str, before: tuple[Any, ...] = ()) -> ToolCallProgress:
    """Its end; `before`: content kept above the words (an update replaces the content)."""
    text = ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=said))
    return ToolCallProgress(
        session_update="tool_call_update", tool_call_id=call_id, status=status,
        content=[*before, text],
    )  # type: ignore[arg-type]  # fmt: skip
