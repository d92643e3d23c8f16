"""The human's shell beside the chat: `!command` in the chat box runs in the working tree with
its output live in the Shell pane, `x` stops it, `cd` and `export` persist, and `y` sends the
output's tail (secrets masked) to the model with the next message. Pilot over the real app,
real bash, the real engine and the scripted model over HTTP."""

from __future__ import annotations

import pytest

from tests.engine_support import MUL, SUB
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    chat_text,
    make_app,
    plan_reply,
    reviewing,
    send_chat,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.records.recorder import runs_dir
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import StillWrongScreen

pytestmark = pytest.mark.usefixtures("api_key")


def _finished(app: TuiEngineerApp, count: int):
    def check() -> bool:
        """the Shell pane to show `count` finished commands"""
        lines = app.shell_pane.output_lines
        return sum(1 for line in lines if line.startswith("[exit status")) >= count

    return check


async def _run(pilot, app: TuiEngineerApp, command: str, count: int) -> None:
    await send_chat(pilot, f"!{command}")
    await wait_for(pilot, _finished(app, count), timeout=20)


async def test_a_command_runs_in_the_repo_and_cd_and_export_persist(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    (repo / "sub").mkdir()
    app = make_app(repo, scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        assert not app.shell_pane.display  # hidden until the first command
        await _run(pilot, app, "cd sub && export SHELL_TEST_VAR=kept", 1)
        assert app.shell_pane.display and app.shell_pane.has_focus
        await _run(pilot, app, "pwd && echo $SHELL_TEST_VAR && exit 4", 2)
        lines = app.shell_pane.output_lines
        assert lines[-3:] == [str(repo / "sub"), "kept", "[exit status 4]"]
        assert "exit status 4 — y sends it" in str(app.shell_pane.query_one("#shell-head").render())
        # Said in the chat once the pane's message about the command's end is handled.
        await wait_for(pilot, lambda: "exit status 4, 2 lines" in chat_text(app), timeout=20)
        assert not scripted_server.chat_requests  # nothing went to the model


async def test_x_stops_a_running_command(make_repo, scripted_server) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await send_chat(pilot, "!echo started; sleep 60; echo never")
        await wait_for(pilot, lambda: "started" in app.shell_pane.output_lines)
        assert app.shell_pane.running
        await pilot.press("x")
        await wait_for(pilot, lambda: "[stopped]" in app.shell_pane.output_lines, timeout=10)
        assert "never" not in app.shell_pane.output_lines
        # The shell is free again; `!` in the pane starts the next command in the chat box.
        await pilot.press("exclamation_mark")
        assert app.chat_input.has_focus and app.chat_input.value == "!"
        await type_text(pilot, "echo again")
        await pilot.press("enter")
        await wait_for(pilot, _finished(app, 1), timeout=20)
        assert "again" in app.shell_pane.output_lines


async def test_narrow_the_shell_is_a_tab(make_repo, scripted_server) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=(90, 30)) as pilot:
        await _run(pilot, app, "echo narrow", 1)
        assert app.screen.query_one("#pane-tabs").active == "tab-shell"
        assert app.shell_pane.display and not app.chat.display
        await pilot.press("greater_than_sign")  # another pane's tab hides it
        await pilot.pause()
        assert not app.shell_pane.display


@whole_session
async def test_y_sends_the_output_with_the_next_chat_message_masked(
    make_repo, scripted_server, monkeypatch
) -> None:
    monkeypatch.setenv("DEPLOY_TOKEN", "s3cr3t-deploy-token-value")
    gate = Gate()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB, hold=gate), Reply(text=MUL)
    )
    repo = make_repo()
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()  # the model writes step 1: chat now goes with step 2's call
        await _run(pilot, app, 'seq 1 3000; echo "deploy with $DEPLOY_TOKEN"; false', 1)
        await pilot.press("y")
        await pilot.pause()
        assert app.chat_input.has_focus
        await type_text(pilot, "this is what I see")
        await pilot.press("enter")
        await pilot.pause()
        assert "You: this is what I see\n📎 $ seq 1 3000" in chat_text(app)
        gate.open()
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, lambda: len(scripted_server.chat_requests) == 3)
        sent = str(scripted_server.chat_requests[2].messages)
        assert "this is what I see" in sent
        assert "exit status 1" in sent and "3000" in sent and "deploy with [masked]" in sent
        assert "s3cr3t-deploy-token-value" not in sent
        assert "\\n1\\n2\\n3\\n" not in sent  # the tail, not the whole output
        await wait_for(pilot, lambda: "✓ delivered to step 2" in chat_text(app))
        await app.stop_work()
    (record,) = runs_dir(repo).glob("*.jsonl")  # the run record keeps what was sent
    recorded = record.read_text()
    assert "deploy with [masked]" in recorded and "s3cr3t-deploy-token-value" not in recorded


@whole_session
async def test_a_command_at_what_is_still_wrong_goes_with_the_answer(
    make_repo, scripted_server
) -> None:
    more = (Reply(text=plan_reply("Add mul")), Reply(text=MUL))
    app = add_sub_app(make_repo(), scripted_server, Reply(text=SUB), *more)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await type_text(pilot, "!python -c 'print(6*7)'")
        await pilot.press("enter")
        await wait_for(pilot, _finished(app, 1), timeout=20)
        await wait_for(pilot, lambda: app.shell_pane.attached is not None)
        assert isinstance(app.screen, StillWrongScreen)  # still asking
        await type_text(pilot, "mul is missing")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(scripted_server.chat_requests) >= 2)
        sent = str(scripted_server.chat_requests[1].messages)  # the plan call for the answer
        assert "mul is missing" in sent and "print(6*7)" in sent and "42" in sent
        await app.stop_work()
