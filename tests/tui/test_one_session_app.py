"""The TUI started on a repository whose session runs in another process (a terminal, a `serve`
tab): told at its start which session holds it (issue 37 §2)."""

from __future__ import annotations

import pytest

from tests.timing_support import RunProcess, hold_step_1
from tests.tui.app_support import SIZE, chat_text, make_app, type_text, wait_for, wait_for_screen
from tui_engineer.tui.screens import ProblemScreen

pytestmark = pytest.mark.usefixtures("api_key")


async def test_the_tui_on_a_repository_another_process_works_on_says_so_at_start(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    first = RunProcess(repo, scripted_server, "add sub and mul")
    try:
        await gate.arrived()
        app = make_app(repo, scripted_server.base_url, "add div")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for_screen(pilot, app, ProblemScreen)
            assert app.screen.title_text == "Another session works on this repository"
            body = str(app.screen.query_one("#dialog-body").render())
            assert f"process {first.proc.pid}" in body
            await pilot.click("#quit")
        assert app.return_code == 2
    finally:
        gate.open()
        first.kill()
    assert len(scripted_server.chat_requests) == 2


async def test_a_request_sent_after_another_process_began_is_told_then(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    app = make_app(repo, scripted_server.base_url)  # waits for its request
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        first = RunProcess(repo, scripted_server, "add sub and mul")
        try:
            await gate.arrived()
            await pilot.click("#chat-input")
            await type_text(pilot, "add div")
            await pilot.press("enter")
            await wait_for(pilot, lambda: "Another tui-engineer session" in chat_text(app))
            assert f"process {first.proc.pid}" in chat_text(app)
            assert app.status.phase == "stopped"
        finally:
            gate.open()
            first.kill()
    assert len(scripted_server.chat_requests) == 2  # the other's plan and step 1
