"""Typing into the Shell pane's program in a real terminal: tmux runs the installed
`tui-engineer` and sends the keys a person presses (Ctrl-C and Ctrl-] as the terminal sends
them, parsed by Textual as in use); the pane is read back with capture-pane. A program asking
for input gets it, a pager is paged and quit, Ctrl-C interrupts a command and not the app."""

from __future__ import annotations

import shlex

import pytest

from tests.engine_support import KEY
from tests.scripted_server import ScriptedServer
from tests.tui.test_demo_tmux import TmuxPane, pane  # noqa: F401 (fixture)
from tests.tui.test_shell_tmux import _box_holds, installed

ASK = """python3 -c "print(input('name? ')[::-1])\""""
TYPING = "Ctrl+] leaves —"  # the head, whose end a narrow pane cuts


def _right_lines(screen: str) -> list[str]:
    """The right-hand column's lines (Chat, then Shell; a full pane's), without borders."""
    return [line.rsplit("││", 1)[-1].strip("│ ") for line in screen.splitlines()]


def _run(pane: TmuxPane, command: str, *shown: str) -> None:  # noqa: F811
    pane.keys("!")
    pane.wait("the chat box to hold the !", _box_holds("!"))
    pane.type(command)
    pane.keys("Enter")
    pane.wait_text("i types into it, x stops it", *shown)


@pytest.mark.slow
def test_keys_typed_into_the_shell_panes_program_in_a_real_terminal(
    make_repo,
    scripted_server: ScriptedServer,
    pane: TmuxPane,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo()
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the tmux server passes on this environment
    app = [*installed(), "--base-url", scripted_server.base_url, "--model", "test-model"]
    pane.start(
        f'cd {shlex.quote(str(repo))} && {shlex.join(app)}; echo "app exited $?"; sleep 600',
        (130, 40),
    )
    pane.wait_text("What do you want done?")

    _run(pane, ASK, "name?")
    pane.keys("i")
    pane.wait_text(TYPING)
    pane.type("abc")
    pane.keys("Enter")
    pane.wait_text("name? abc", "cba", "[exit status 0]")

    _run(pane, "seq 1 500 | less")
    pane.keys("f", "Enter")  # the whole window for the pager; Enter types into it too
    pane.wait_text(TYPING)
    pane.keys("G")
    pane.wait_text("500")
    pane.keys("q")  # less leaves its own screen: nothing of it stays in the log
    shown = pane.wait_text("[exit status 0]")
    assert "$ seq 1 500 | less\n[exit status 0]" in "\n".join(_right_lines(shown)), shown
    pane.keys("f")

    _run(pane, "echo waiting; sleep 60; echo never", "waiting")
    pane.keys("i", "C-c")  # to the program, not the app's quit
    shown = pane.wait_text("[exit status 130]")
    assert "never" not in _right_lines(shown) and "app exited" not in shown

    _run(pane, 'read -p "go? " answer; echo "got $answer"', "go?")
    pane.keys("i", "x", "y", "C-]")  # typed into it; then Ctrl-] leaves
    pane.wait_text("go? xy", "i types into it, x stops it")
    pane.keys("x")  # the pane's key again: stops it
    shown = pane.wait_text("[stopped]")
    assert "got xy" not in _right_lines(shown)

    pane.keys("q")
    pane.wait_text("app exited 0")
