"""The status bar while a session starts: from the request sent until the session says it has
started (on a big repository, seconds spent making its first shadow), it says it is starting,
not "ready". The real app through Pilot, the scripted model over HTTP."""

from __future__ import annotations

import pytest

from tests.engine_support import SUB
from tests.scripted_server import Reply
from tests.tui.app_support import SIZE, make_app, reviewing, send_chat, wait_for

pytestmark = pytest.mark.usefixtures("api_key")


async def test_a_request_sent_says_the_session_is_starting_until_it_has(
    make_repo, scripted_server
) -> None:
    scripted_server.script(Reply(text=SUB))
    app = make_app(make_repo(), scripted_server.base_url, plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.phase == "ready")
        phases: list[str] = []
        app.watch(app.status, "phase", lambda phase: phases.append(phase), init=False)
        await send_chat(pilot, "add sub")
        await wait_for(pilot, reviewing(app, 1))
        assert phases[0] == "starting the session"
        assert phases[1] != "ready" and "review step 1" in phases[-1]
        await app.stop_work()
