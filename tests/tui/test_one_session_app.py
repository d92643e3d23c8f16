"""The TUI started on a repository whose session runs in another process (a terminal, a `serve`
tab): told at its start which session holds it, and offered to take it over (issue 37 §2):
taking over stops the other process cleanly and goes on with its session here, from its record,
with no new plan call; quitting leaves the other one alone."""

from __future__ import annotations

import pytest

from tests.engine_support import MUL_ON_SUB, SUB
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import RunProcess, hold_step_1, plan_calls, titles
from tests.tui.app_support import (
    SIZE,
    chat_text,
    make_app,
    reviewing,
    send_chat,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import TakeOverScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
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
            await wait_for_screen(pilot, app, TakeOverScreen)
            assert app.screen.title_text == "Another session works on this repository"
            body = str(app.screen.query_one("#dialog-body").render())
            assert f"process {first.proc.pid}" in body
            assert "Take over" in body
            await pilot.click("#quit")
        assert app.return_code == 2
        assert first.proc.poll() is None  # quitting left the other session alone
    finally:
        gate.open()
        first.kill()
    assert len(scripted_server.chat_requests) == 2


@whole_session
async def test_taking_over_stops_the_other_process_and_goes_on_with_its_session_here(
    make_repo, scripted_server
) -> None:
    """A second terminal's TUI takes over the session a `tui-engineer run` holds: that process
    stops cleanly (exit 1, stopped by SIGTERM, nothing committed half way), and its session goes
    on here from its record: its plan is not asked again, its step 1 is reviewed and committed."""
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    later = Gate()
    # Step 1 asked again (its held call was cut), then step 2, held until the test ends.
    scripted_server.script(Reply(text=SUB), Reply(text=MUL_ON_SUB, hold=later))
    first = RunProcess(repo, scripted_server, "add sub and mul")
    try:
        await gate.arrived()
        app = make_app(repo, scripted_server.base_url, "add div")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for_screen(pilot, app, TakeOverScreen)
            await pilot.press("t")
            await wait_for(pilot, reviewing(app))
            code, err = first.finish()
            assert code == 1, err
            assert "stopped by SIGTERM" in err
            assert "Took over session" in chat_text(app)
            assert "Add sub" in chat_text(app) or "Add sub" in str(app.plan_pane.render())
            assert app.options.request == "add sub and mul"  # its session, not "add div"
            await pilot.press("a")
            await wait_for(pilot, lambda: titles(repo)[0] == "Add sub")
            await pilot.press("ctrl+q")
    finally:
        gate.open()
        later.open()
        first.kill()
    assert plan_calls(scripted_server) == 1  # the first process's only: none after the take over


@whole_session
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
            await send_chat(pilot, "add div")
            await wait_for(pilot, lambda: "Another tui-engineer session" in chat_text(app))
            assert f"process {first.proc.pid}" in chat_text(app)
            assert app.status.phase == "stopped"
        finally:
            gate.open()
            first.kill()
    assert len(scripted_server.chat_requests) == 2  # the other's plan and step 1
