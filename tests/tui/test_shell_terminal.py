"""The Shell pane's command runs on a terminal: a program asking for input waits for it, `i`
types into it (the pane says so, the footer offers only the way out), every key goes to the
program (Ctrl-C too, which the app otherwise takes to quit), and what it showed is what the log
keeps and `y` sends. Pilot over the real app, real bash on a real pseudo-terminal."""

from __future__ import annotations

import pytest

from tests.engine_support import SUB
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    chat_text,
    make_app,
    reviewing,
    send_chat,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import StillWrongScreen

pytestmark = pytest.mark.usefixtures("api_key")

REVERSE = """python3 -c "print(input('name? ')[::-1])\""""


def _footer_keys(app: TuiEngineerApp) -> set[str]:
    return {
        b.description
        for _, b, enabled, _ in app.screen.active_bindings.values()
        if b.show and enabled
    }


async def test_typing_into_a_program_that_asks_and_y_sends_what_it_showed(
    make_repo, scripted_server
) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send_chat(pilot, f"!{REVERSE}")
        pane = app.shell_pane
        await wait_for(pilot, lambda: "name?" in pane.output_lines, timeout=20)
        assert pane.running and pane.has_focus and not pane.typing
        assert {"Type into it", "Stop"} <= _footer_keys(app)
        await pilot.press("i")
        assert pane.typing and "typing into the program" in pane.border_title
        assert "Leave typing" in _footer_keys(app)
        assert not {"Stop", "Quit", "New command"} & _footer_keys(app)
        await type_text(pilot, "abc")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "[exit status 0]" in pane.output_lines, timeout=20)
        lines = pane.output_lines
        assert lines[-4:] == [f"$ {REVERSE}", "name? abc", "cba", "[exit status 0]"]
        assert not pane.typing and pane.border_title == "Shell"  # it ended: the mode too
        await pilot.press("y")
        await wait_for(pilot, lambda: pane.attached is not None)
        assert "📎 $ python3" in chat_text(app)
        sent = pane.take_attached()
        assert "(exit status 0)" in sent and "name? abc\ncba" in sent


async def test_ctrl_c_typed_into_the_program_interrupts_it_and_the_app_runs_on(
    make_repo, scripted_server
) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send_chat(pilot, "!echo waiting; sleep 60; echo never")
        pane = app.shell_pane
        await wait_for(pilot, lambda: "waiting" in pane.output_lines, timeout=20)
        await pilot.press("enter")  # Enter types into it too
        assert pane.typing
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: "[exit status 130]" in pane.output_lines, timeout=10)
        assert "never" not in pane.output_lines
        assert app.is_running and not app.quitting
        # Keys are the pane's again: `!` starts the next command in the chat box.
        await pilot.press("exclamation_mark")
        assert app.chat_input.has_focus and app.chat_input.value == "!"


async def test_ctrl_bracket_leaves_typing_and_x_stops_again(make_repo, scripted_server) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send_chat(pilot, '!read -p "go? " answer; echo "got $answer"')
        pane = app.shell_pane
        await wait_for(pilot, lambda: "go?" in pane.output_lines, timeout=20)
        await pilot.click("#shell-terminal")  # a click on its screen types into it too
        assert pane.typing
        await pilot.press("x", "tab", "y")  # typed into the program: not stop, focus, send
        assert pane.has_focus
        await pilot.press("ctrl+right_square_bracket")
        assert not pane.typing and pane.running
        await wait_for(pilot, lambda: "go? x   y" in pane.output_lines)  # the tab echoed
        await pilot.press("x")
        await wait_for(pilot, lambda: "[stopped]" in pane.output_lines, timeout=10)
        assert not any(line.startswith("got") for line in pane.output_lines)


async def test_the_terminal_is_the_panes_size_and_follows_it(make_repo, scripted_server) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send_chat(pilot, "!stty size; trap 'stty size' WINCH; sleep 30 & wait; sleep 30")
        pane = app.shell_pane
        view = pane.query_one("#shell-terminal")
        await wait_for(pilot, lambda: view.size.area and pane.terminal is not None)
        expected = f"{view.size.height} {view.size.width}"
        await wait_for(pilot, lambda: expected in pane.output_lines, timeout=20)
        await pilot.press("f")  # the pane takes the whole screen: its terminal too
        await wait_for(pilot, lambda: view.size.height > int(expected.split()[0]))
        resized = f"{view.size.height} {view.size.width}"
        await wait_for(pilot, lambda: resized in pane.output_lines, timeout=10)
        assert (pane.terminal.columns, pane.terminal.lines) == (view.size.width, view.size.height)
        await pilot.press("x")
        await wait_for(pilot, lambda: "[stopped]" in pane.output_lines, timeout=10)


@whole_session
async def test_a_command_typed_at_the_question_reads_no_input_and_never_waits(
    make_repo, scripted_server
) -> None:
    # The dialog keeps the keys: nobody could type into the command, so it runs as `run`'s `!`
    # does (no terminal, empty input) instead of waiting for ever under the dialog.
    app = add_sub_app(make_repo(), scripted_server, Reply(text=SUB))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await type_text(pilot, '!read -p "name? " name; echo "read $? [$name]"')
        await pilot.press("enter")
        await wait_for(pilot, lambda: "[exit status 0]" in app.shell_pane.output_lines, timeout=20)
        assert "read 1 []" in app.shell_pane.output_lines
        await wait_for(pilot, lambda: app.shell_pane.attached is not None)
        assert isinstance(app.screen, StillWrongScreen)
        await app.stop_work()
