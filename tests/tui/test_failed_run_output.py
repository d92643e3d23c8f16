"""The output of a failing run reaches the Tests pane whatever its exit code (issue 18): a run
that fails before any test reports is explained only by its last lines."""

from __future__ import annotations

import sys

import pytest

from tests.engine_support import KEY, SUB
from tests.scripted_server import Reply
from tests.tui.app_support import SIZE, make_app, reviewing, wait_for, wait_for_screen


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


async def test_a_run_that_fails_with_exit_code_3_shows_its_last_lines(
    make_repo, scripted_server
) -> None:
    scripted_server.script(Reply(text=SUB))
    command = "sh -c 'echo collecting; echo the reason it broke >&2; exit 3'"
    app = make_app(
        make_repo(), scripted_server.base_url, "add sub", plan=False,
        test_command=command, max_fix_attempts=0, sandbox="none",
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: not app.test_pane.running)
        await pilot.pause()
        assert "the reason it broke" in app.test_pane.lines
        await pilot.press("q")


async def test_a_suite_that_cannot_run_on_the_starting_commit_shows_a_start_up_screen(
    make_repo, scripted_server
) -> None:
    from tests.conftest import SAMPLE_FILES
    from tui_engineer.tui.screens import ProblemScreen

    repo = make_repo({**SAMPLE_FILES, "tests/conftest.py": "import calcplugin\n"})
    scripted_server.script(Reply(text=SUB, delay=30))  # the model is never waited for
    app = make_app(
        repo, scripted_server.base_url, "add sub", plan=False,
        test_command=f"{sys.executable} -m pytest -q", sandbox="none",
    )  # fmt: skip
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        assert app.screen.title_text == "The tests cannot run"
        text = app.screen.body  # type: ignore[attr-defined]
        assert "No module named 'calcplugin'" in text and "--unverified" in text
        await pilot.click("#quit")
        await wait_for(pilot, lambda: not app.is_running)
