"""A step's tests cut by test_timeout ask the human what to do (issue 48, part 3): wait longer
(the tests run again with twice the time, then the step is reviewed again), run fewer tests
(a command the human narrows), or accept untested (its commit says so). The model's first
answer is the right fix, but it makes the suite slower than the timeout (the fix waits between
retries); the model is asked once. Real pytest runs in the local sandbox, real git, the real
app through Pilot."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.engine.test_test_timeout import FILES as RETRY_FILES
from tests.engine.test_test_timeout import WAIT
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.tui.app_support import (
    QUIET_TESTS,
    SIZE,
    finish_session,
    make_app,
    reviewing,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens.timeout_choice import FewerTestsScreen, TimeoutChoiceScreen

TIMEOUT = 15  # seconds: the starting commit's suite fails at once, the fixed one waits 20 s
# The retry project of the headless timeout test, and a quick test the human can narrow to.
FILES = {
    **RETRY_FILES,
    "tests/test_quick.py": "from retry import retry\n\n\ndef test_once():\n"
    "    assert retry(lambda: 1, times=1, delay=0) == 1\n",
}
REQUEST = "retry does not wait between attempts; fix it"

pytestmark = pytest.mark.usefixtures("api_key")


def timeout_app(make_repo, server: ScriptedServer):
    repo = make_repo(FILES)
    server.script(Reply(text=WAIT))
    app = make_app(
        repo, server.base_url, REQUEST, plan=False, test_command=QUIET_TESTS,
        test_timeout=TIMEOUT, sandbox="local",
    )  # fmt: skip
    return repo, app


def body(app) -> str:
    return str(app.screen.query_one("#dialog-body").render())


@whole_session
async def test_wait_longer_runs_the_tests_again_with_twice_the_time(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo, app = timeout_app(make_repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, TimeoutChoiceScreen)
        assert f"timed out after {TIMEOUT}" in body(app), body(app)
        assert str(app.screen.query_one("#wait").label) == f"Wait longer ({TIMEOUT * 2}s)"
        await pilot.click("#wait")
        await wait_for(pilot, reviewing(app, 2), timeout=120)
        assert not isinstance(app.screen, TimeoutChoiceScreen)  # passed: nothing to ask
        assert app.controller.session.rt.options.test_timeout == TIMEOUT * 2
        assert app.controller.reviewer.proposal.tests_ok
        await pilot.press("a")
        await finish_session(pilot, app)
    assert len(scripted_server.chat_requests) == 1  # the timeout was never sent to the model
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith(REQUEST) and "Untested" not in message


@whole_session
async def test_fewer_tests_run_the_command_the_human_narrowed(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo, app = timeout_app(make_repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, TimeoutChoiceScreen)
        await pilot.click("#fewer")
        await wait_for_screen(pilot, app, FewerTestsScreen)
        await pilot.press("end")
        await type_text(pilot, " tests/test_quick.py")
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2), timeout=120)
        proposal = app.controller.reviewer.proposal
        assert proposal.tests_ok and proposal.report.passed == 1, proposal.summary()
        assert app.controller.session.rt.options.test_command.endswith("tests/test_quick.py")
        await pilot.press("a")
        await finish_session(pilot, app)
    assert len(scripted_server.chat_requests) == 1
    assert "time.sleep(delay)" in git(repo, "show", "HEAD", "--", "retry.py")


@whole_session
async def test_accept_untested_commits_and_the_commit_says_so(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo, app = timeout_app(make_repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, TimeoutChoiceScreen)
        await pilot.click("#untested")
        await finish_session(pilot, app)
    message = git(repo, "log", "-1", "--format=%B")
    assert f"Untested: the tests ran out of time (timed out after {TIMEOUT}" in message, message
    assert "time.sleep(delay)" in git(repo, "show", "HEAD", "--", "retry.py")
