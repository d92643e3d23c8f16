"""Waits a user can read (issue 37, part 3): a key pressed while the model works says why it
does nothing now."""

from __future__ import annotations

import pytest

from tests.engine_support import plan_reply
from tests.scripted_server import Gate, Reply
from tests.tui.app_support import SIZE, make_app

pytestmark = pytest.mark.usefixtures("api_key")


async def test_t_while_the_model_plans_says_why_the_tests_do_not_run_now(
    make_repo, scripted_server
) -> None:
    """Issue 37, part 3: `t` during the plan call did nothing and said nothing."""
    gate = Gate()
    scripted_server.script(Reply(text=plan_reply("Fix add"), hold=gate))
    app = make_app(make_repo(), scripted_server.base_url, "fix add")
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        await pilot.press("t")
        await pilot.pause()
        said = [str(note.message) for note in app._notifications]
        gate.open()
        assert any("The model is working" in s for s in said), said
