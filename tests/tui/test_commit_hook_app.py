"""The user's pre-commit hook in the TUI (issue 46's first case): a step the hook would refuse
goes back to the model before the human sees it, so the human reviews the fixed step once and
the accept commits it, with no refusal. The real app driven by Pilot, a real git hook, pytest
runs, the model over HTTP."""

from __future__ import annotations

import pytest

from tests.conftest import git, write_hook
from tests.engine.test_commit_hook_check import DROP_OS, READS_INDEX, SUB_WITH_OS
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, finish_session, make_app, reviewing, wait_for

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_the_human_reviews_only_the_step_the_hook_accepts(make_repo, scripted_server) -> None:
    repo = make_repo()
    write_hook(repo, "pre-commit", READS_INDEX)
    scripted_server.script(Reply(text=SUB_WITH_OS), Reply(text=DROP_OS))
    app = make_app(repo, scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        proposal = app.controller.reviewer.proposal
        assert proposal.tests_ok and "+import os" not in proposal.diff  # the fixed step
        assert len(scripted_server.chat_requests) == 2  # one more model call, no diagnosis
        assert "F401 'os' imported but unused" in str(scripted_server.chat_requests[1])
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    text = git(repo, "show", "HEAD:calc.py")
    assert "def sub" in text and "import os" not in text
