"""A quit never hangs: the work it stops gets a bounded time for its cleanup, then the app goes
on quitting and says so (what a cleanup cut there leaves, the next start removes). The real app
through Pilot, on a session under review."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.tui.app_support import SIZE, add_sub_app, reviewing, wait_for
from tui_engineer.engine import events as ev
from tui_engineer.tui.bridge import EngineEvent

pytestmark = pytest.mark.usefixtures("api_key")


async def _stops_late() -> None:
    """Work whose cleanup outlasts the bound (a git that hangs on a network file system)."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        await asyncio.sleep(3)
        raise


async def test_a_quit_whose_work_will_not_stop_goes_on_after_its_bound(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui_engineer.tui.quitting.STOP_BOUND", 1.0)
    app = add_sub_app(make_repo(), scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        app.controller.tests = app.run_worker(_stops_late(), group="tests", exit_on_error=False)
        await pilot.pause()
        started = time.monotonic()
        await app.stop_work()
        assert time.monotonic() - started < 2.5  # the bound, not the cleanup's 3 s
        assert app.status.busy == "the work did not stop within 1 s: quitting anyway"


async def test_the_engines_last_events_still_queued_at_the_end_are_let_go(
    make_repo, scripted_server
) -> None:
    """Events the engine sent as its stop cleaned up may still be queued when the app shuts
    down, after its panes' widgets are gone: they are let go, not a crash on the way out."""
    app = add_sub_app(make_repo(), scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await app.stop_work()
        for _ in range(20):
            app.post_message(EngineEvent(ev.TestsStarted(step=1, command="pytest")))
            app.post_message(EngineEvent(ev.Notice(message="cleaned up")))
