"""The project's own checks in the TUI's Tests pane: a row per check run on the step, its
findings and time, updated as the fix runs it again; the fixed step is committed when the human
accepts it. The real engine, ruff in the project's own .venv, pytest runs, the scripted model."""

from __future__ import annotations

import pytest

from tests.checks_support import RUFF_PROJECT, TESTS, tool_venv
from tests.checks_support import ruff_wheels as ruff_wheels  # a fixture
from tests.conftest import git
from tests.engine.test_project_checks import DROP_OS, FIX_WITH_OS
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, chat_text, finish_session, make_app, reviewing, wait_for
from tui_engineer.tui.panes.check_rows import CheckRows

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_the_tests_pane_has_a_row_per_check(make_repo, scripted_server, ruff_wheels) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    fix = Gate()  # the fix is held: the first row is read while the model "writes" it
    scripted_server.script(Reply(text=FIX_WITH_OS), Reply(text=DROP_OS, hold=fix))
    app = make_app(repo, scripted_server.base_url, "fix add", plan=False, test_command=TESTS)
    async with app.run_test(size=SIZE) as pilot:
        rows = app.test_pane.query_one(CheckRows)
        await fix.arrived()
        await wait_for(pilot, lambda: rows.text)
        assert rows.text == "✗ ruff check · 1 new finding (sent to the model)"
        fix.open()
        await wait_for(pilot, reviewing(app, 1))
        assert rows.text == "✓ ruff check · passed"
        assert "The project's own checks run on each step with the tests: ruff check" in (
            chat_text(app)
        )
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
    assert "import os" not in (repo / "calc.py").read_text()
