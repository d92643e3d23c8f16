"""The Shell pane's commands on a pseudo-terminal: a program sees a terminal (isatty), reads
what the human types, draws with cursor movement as a terminal shows it, stops with its
children, and `cd`/`export` still persist. Real bash on a real PTY, emulated by pyte."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import time
from pathlib import Path

import pytest

from tui_engineer.base import pty_run
from tui_engineer.base.terminal_screen import TerminalScreen
from tui_engineer.base.user_shell import ShellRun, UserShell


def _run(shell: UserShell, command: str, screen: TerminalScreen | None = None) -> ShellRun:
    screen = screen or TerminalScreen(80, 24)
    return asyncio.run(shell.run(command, lambda _: None, terminal=screen))


def test_a_command_has_a_terminal_sized_to_the_screen_with_term_set(tmp_path: Path) -> None:
    command = '[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo "a terminal"; stty size; echo "$TERM"'
    command += "; python3 -c 'import shutil; print(*shutil.get_terminal_size())'"
    env = {**os.environ, "COLUMNS": "80", "LINES": "24"}  # as tmux hands them to the app
    run = _run(UserShell(tmp_path, env), command, TerminalScreen(72, 19))
    assert run.output.splitlines() == ["a terminal", "19 72", "xterm-256color", "72 19"]
    assert run.status == 0


def _typed(tmp_path: Path, command: str, shown: str, keys: bytes) -> ShellRun:
    """`command` run on a terminal; once the screen shows `shown`, `keys` typed into it."""
    shell = UserShell(tmp_path)
    screen = TerminalScreen(80, 24)

    async def scenario() -> ShellRun:
        task = asyncio.create_task(shell.run(command, lambda _: None, terminal=screen))
        while shown not in screen.text():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.1)  # the program waits for input now, not just printed
        shell.write(keys)
        return await asyncio.wait_for(task, 10)

    return asyncio.run(asyncio.wait_for(scenario(), 30))


def test_what_the_human_types_reaches_the_program(tmp_path: Path) -> None:
    run = _typed(tmp_path, 'read -p "name? " name; echo "hello $name"', "name?", b"Ada\r")
    # The terminal echoes what was typed, as a terminal does.
    assert run.output.splitlines() == ["name? Ada", "hello Ada"]
    assert run.status == 0


def test_ctrl_c_typed_interrupts_the_program(tmp_path: Path) -> None:
    run = _typed(tmp_path, "echo waiting; sleep 30; echo never", "waiting", b"\x03")
    assert run.status == 130 and "never" not in run.output


def test_cursor_movement_and_a_progress_bar_end_as_the_screen_shows_them(tmp_path: Path) -> None:
    draw = (
        r"printf 'get 10%%\rget 60%%\rget 100%%\n'; "
        r"printf 'line one\nline two\n\033[2A\033[2Kfirst\033[2B\r'; "  # up two, redraw, down
        r"printf '\033[?1049h\033[Hfull screen\033[?1049l'; "  # an alternate screen leaves
        r"printf 'done\n\n\n'"
    )
    run = _run(UserShell(tmp_path), draw)
    assert run.output.splitlines() == ["get 100%", "first", "line two", "done"]


def test_a_long_line_the_screen_wraps_is_one_line_again(tmp_path: Path) -> None:
    shell = UserShell(tmp_path, {"PATH": os.environ["PATH"], "MY_API_TOKEN": "tok-1234567890abc"})
    run = _run(
        shell, 'echo "$(printf "x%.0s" $(seq 1 30)) token $MY_API_TOKEN end"', TerminalScreen(20, 5)
    )
    assert run.output == "x" * 30 + " token tok-1234567890abc end"
    assert "token [masked] end" in run.attachment()


def test_scrollback_keeps_what_scrolled_off_the_screen(tmp_path: Path) -> None:
    run = _run(UserShell(tmp_path), "seq 1 500", TerminalScreen(40, 10))
    assert run.output.splitlines() == [str(n) for n in range(1, 501)]


def test_all_a_command_wrote_is_kept_when_the_screen_lags_behind_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the emulation of a chunk can take longer than the time output
    written by a command's background children is awaited: what the command itself wrote
    before it ended waits in the terminal's buffers (up to tens of KB), and all of it is kept."""
    monkeypatch.setattr(pty_run, "DRAIN_LIMIT", 0.3)  # shorter than one chunk's emulation
    shell = UserShell(tmp_path)
    lagged: list[bool] = []

    def slow(_text: str) -> None:  # the screen lags behind: the terminal's buffers fill up
        ended = shell._process is not None and shell._process.returncode is not None
        lagged.append(ended)
        time.sleep(0.4 if ended else 0.02)

    command = "seq 1 8000; echo the-end; false"
    run = asyncio.run(shell.run(command, slow, terminal=TerminalScreen(80, 24)))
    assert lagged.count(True) > 2, "the command ended with little left to read: nothing lagged"
    assert run.output.splitlines()[-2:] == ["8000", "the-end"] and run.status == 1


def test_stop_ends_the_command_and_a_child_in_its_background(tmp_path: Path) -> None:
    shell = UserShell(tmp_path)
    marker = tmp_path / "child-alive"

    async def scenario() -> tuple[ShellRun, float]:
        started = time.monotonic()
        command = f"(sleep 3; touch {marker}) & sleep 30; echo never"
        task = asyncio.create_task(
            shell.run(command, lambda _: None, terminal=TerminalScreen(80, 24))
        )
        await asyncio.sleep(0.5)
        shell.stop()
        return await asyncio.wait_for(task, 10), time.monotonic() - started

    run, took = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert run.status is None and run.outcome == "stopped" and took < 5
    time.sleep(3.5)
    assert not marker.exists()  # the child in the background was stopped too


def test_cd_and_export_persist_on_the_terminal(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    shell = UserShell(tmp_path)
    _run(shell, "cd sub && export GREETING=hello-there")
    run = _run(shell, 'pwd; echo "$GREETING"; exit 3')
    assert run.output.splitlines() == [str(tmp_path / "sub"), "hello-there"]
    assert run.status == 3
    assert _run(shell, "pwd").output == str(tmp_path / "sub")


def test_the_terminal_follows_the_pane_when_it_resizes(tmp_path: Path) -> None:
    shell = UserShell(tmp_path)
    screen = TerminalScreen(80, 24)

    async def scenario() -> ShellRun:
        # A program that is told of the resize (SIGWINCH) and asks for the size again.
        program = (
            "import shutil, signal, time\n"
            "signal.signal(signal.SIGWINCH, lambda *_: print(*shutil.get_terminal_size()))\n"
            "print('ready', flush=True)\n"
            "time.sleep(10)\n"
        )
        command = f"stty size; python3 -c {shlex.quote(program)}"
        task = asyncio.create_task(shell.run(command, lambda _: None, terminal=screen))
        while "ready" not in screen.text():
            await asyncio.sleep(0.02)
        shell.resize(50, 12)
        while "50 12" not in screen.text():
            await asyncio.sleep(0.02)
        shell.stop()
        return await asyncio.wait_for(task, 10)

    run = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert (screen.columns, screen.lines) == (50, 12)
    # (bash may say "Terminated" after them: the stop's SIGTERM reached its child first)
    assert run.output.splitlines()[:3] == ["24 80", "ready", "50 12"]


def test_a_curses_program_draws_on_the_screen_and_leaves_nothing_behind(tmp_path: Path) -> None:
    shell = UserShell(tmp_path)
    screen = TerminalScreen(60, 12)
    program = (
        "import curses\n"
        "def main(win):\n"
        "    win.addstr(3, 10, 'drawn by curses')\n"
        "    win.refresh()\n"
        "    win.getch()\n"
        "curses.wrapper(main)\n"
        "print('after curses')\n"
    )

    async def scenario() -> tuple[list[str], ShellRun]:
        command = f"echo before; python3 -c {shlex.quote(program)}"
        task = asyncio.create_task(shell.run(command, lambda _: None, terminal=screen))
        while "drawn by curses" not in screen.text():
            await asyncio.sleep(0.02)
        drawn = list(screen.screen.display)
        shell.write(b"q")  # any key ends it
        return drawn, await asyncio.wait_for(task, 10)

    drawn, run = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert drawn[3][10:25] == "drawn by curses"  # where it put it, on its own screen
    assert run.output.splitlines() == ["before", "after curses"]


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
def test_vim_edits_a_file_esc_included_and_its_screen_goes_when_it_quits(tmp_path: Path) -> None:
    # vim asks the terminal where the cursor is and sends xterm's private sequences (which
    # crashed pyte's parser): both must pass for it to work at all.
    shell = UserShell(tmp_path)
    screen = TerminalScreen(80, 20)

    async def scenario() -> ShellRun:
        command = "echo editing; vim -u NONE -N notes.txt; echo edited"
        task = asyncio.create_task(shell.run(command, lambda _: None, terminal=screen))
        while "[New]" not in screen.text():
            await asyncio.sleep(0.02)
        for keys in (b"i", b"hello from vim", b"\x1b", b":wq\r"):
            shell.write(keys)
            await asyncio.sleep(0.1)
        return await asyncio.wait_for(task, 10)

    run = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert (tmp_path / "notes.txt").read_text() == "hello from vim\n"
    assert run.output.splitlines() == ["editing", "edited"] and run.status == 0
