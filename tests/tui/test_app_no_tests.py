"""A project without tests in the TUI: `--init` in an empty folder, then the choice between the
first step writing the tests and an unverified session (real engine, git, pytest, Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from tests.conftest import git
from tests.engine_support import create, plan_reply
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    finish_session,
    make_app,
    reviewing,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import NoTestsScreen

CALC = create("calc.py", "def add(a, b):\n    return a + b\n")
CALC_TEST = create(
    "tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
)


pytestmark = pytest.mark.usefixtures("api_key")


async def accept_and_finish(pilot: Pilot, app: TuiEngineerApp) -> None:
    await pilot.press("a")
    await finish_session(pilot, app)


@whole_session
async def test_init_in_an_empty_folder_then_the_first_step_writes_the_tests(
    tmp_path: Path, scripted_server
) -> None:
    folder = tmp_path / "new-project"  # does not even exist yet
    scripted_server.script(Reply(text=plan_reply("Add add")), Reply(text=CALC_TEST + CALC))
    app = make_app(folder, scripted_server.base_url, "add add")
    app.init_first = True  # tui-engineer --init "add add"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, NoTestsScreen)
        assert "Write tests first" in str(app.screen.query_one("#write").label)
        await pilot.click("#write")
        await wait_for(pilot, reviewing(app), timeout=90)  # two pytest runs on a busy machine
        assert "1. Add add  test first" in str(app.plan_pane.get_option_at_index(0).prompt)
        # The review shows both runs: the new test on the old (empty) code, then after.
        runs = app.test_pane.runs_text
        assert "before the change: 1 error" in runs and "(expected)" in runs
        assert "after the change (full): 1 passed" in runs
        await accept_and_finish(pilot, app)
    assert git(folder, "log", "--format=%s") == "Add add"
    assert (folder / "tests/test_calc.py").is_file()


@whole_session
async def test_an_unverified_session_says_so_in_the_review(make_repo, scripted_server) -> None:
    repo = make_repo({"README.md": "A calculator, one day.\n"})
    scripted_server.script(Reply(text=CALC))
    app = make_app(repo, scripted_server.base_url, "add add", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, NoTestsScreen)
        await pilot.click("#unverified")
        await wait_for(pilot, reviewing(app))
        assert app.test_pane.runs_text == "unverified: no tests ran"
        assert "unverified: no tests ran" in app.status.phase
        notes = " ".join(str(w.render()) for w in app.chat.query(".chat-note"))
        assert "Unverified mode: there is no test command, so no tests run" in notes
        await accept_and_finish(pilot, app)
    assert "Unverified: no tests ran." in git(repo, "log", "-1", "--format=%B")
