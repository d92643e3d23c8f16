"""The output of a failing run reaches the Tests pane whatever its exit code (issue 18): a run
that fails before any test reports is explained only by its last lines."""

from __future__ import annotations

import sys

import pytest

from tests.engine_support import SUB
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    add_sub_app,
    chat_text,
    drive_to_review,
    wait_for,
    wait_for_screen,
)

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_run_that_fails_with_exit_code_3_shows_its_last_lines(
    make_repo, scripted_server
) -> None:
    command = "sh -c 'echo collecting; echo the reason it broke >&2; exit 3'"
    app = add_sub_app(
        make_repo(), scripted_server, test_command=command, max_fix_attempts=0, sandbox="none"
    )
    async with app.run_test(size=SIZE) as pilot:
        await drive_to_review(pilot)
        assert "the reason it broke" in app.test_pane.lines
        await pilot.press("q")


@whole_session
async def test_a_suite_that_cannot_run_on_the_starting_commit_shows_a_start_up_screen(
    make_repo, scripted_server
) -> None:
    from tests.conftest import SAMPLE_FILES
    from tui_engineer.tui.screens import ProblemScreen

    repo = make_repo({**SAMPLE_FILES, "tests/conftest.py": "import calcplugin\n"})
    app = add_sub_app(
        repo,
        scripted_server,
        Reply(text=SUB, delay=30),  # the model is never waited for
        test_command=f"{sys.executable} -m pytest -q",
        sandbox="none",
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        assert app.screen.title_text == "The tests cannot run"
        text = app.screen.body  # type: ignore[attr-defined]
        assert "No module named 'calcplugin'" in text and "--unverified" in text
        await pilot.click("#quit")
        await wait_for(pilot, lambda: not app.is_running)


@whole_session
async def test_a_test_red_before_the_session_is_said_apart_in_the_tests_pane(
    make_repo, scripted_server
) -> None:
    from tests.conftest import SAMPLE_FILES

    red = "\n\ndef test_mul():\n    assert 2 * 2 == 5\n"
    files = {**SAMPLE_FILES, "tests/test_calc.py": SAMPLE_FILES["tests/test_calc.py"] + red}
    app = add_sub_app(
        make_repo(files),
        scripted_server,
        test_command=f"{sys.executable} -m pytest -q",
        sandbox="none",
    )
    async with app.run_test(size=SIZE) as pilot:
        await drive_to_review(pilot)
        assert "1 of them failing before this session" in app.test_pane.header_text
        assert "1 failing before this session: " in chat_text(app)
        assert "(not this step's)" in chat_text(app)
        await pilot.press("q")
