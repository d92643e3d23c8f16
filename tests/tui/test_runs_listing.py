"""`tui-engineer runs` tells what happened: a confirmed quit is a quit, an undone step is undone."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    SUB,
    add_sub_app,
    reviewing,
    session_ended,
    wait_for,
    wait_for_screen,
)
from tui_engineer.records.listing import format_runs, list_runs
from tui_engineer.tui.screens import QuitScreen, StillWrongScreen, VerdictScreen

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_confirmed_quit_is_listed_as_a_quit(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server, Reply(text=SUB, delay=30))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.busy.startswith("model"))
        await pilot.press("q")
        await wait_for_screen(pilot, app, QuitScreen)
        await pilot.click("#quit")
    [run] = list_runs(repo)
    assert run.outcome == "quit"


@whole_session
async def test_an_undone_step_is_not_counted_as_accepted(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await pilot.click("#undo")
        await wait_for(pilot, lambda: app.plan_pane.status_of(1) == "undone")
        await pilot.click("#done")
        await wait_for_screen(pilot, app, VerdictScreen)
        await pilot.click("#skip")
        await wait_for(pilot, session_ended(app))
    [run] = list_runs(repo)
    assert (run.accepted, run.undone) == (0, 1)
    assert "1 undone" in format_runs([run])


@whole_session
async def test_sigterm_stops_the_app_and_removes_the_shadow(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server, Reply(text=SUB, delay=30))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.busy.startswith("model"))
        assert shadow_folders()
        os.kill(os.getpid(), signal.SIGTERM)  # the app's handler takes it, not the default
        await wait_for(pilot, lambda: app.return_code is not None)
    assert shadow_folders() == []
    [run] = list_runs(repo)
    assert run.outcome == "quit"


def shadow_folders() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
    return list(folder.glob("*/*")) if folder.is_dir() else []
