"""Snapshots of the real app in its main states, driven through the real engine and the scripted
server. Deterministic: fixed size and git dates, no clock or durations, temp paths scrubbed.
Update with `pytest tests/tui/test_snapshots.py --snapshot-update` and look at the SVGs."""

from __future__ import annotations

import pytest

from tests.tiers import whole_session
from tests.tui.app_support import (
    FIXED_DATES,
    KEY,
    QUIET_TESTS,
    drive_to_fix_loop,
    drive_to_review,
    drive_to_still_wrong,
    fix_loop_script,
    make_app,
    review_script,
    still_wrong_script,
    wait_for_screen,
)
from tui_engineer.tui.screens import ProblemScreen
from tui_engineer.tui.themes import load_themes

THEMES = sorted(theme.name for theme in load_themes())


@pytest.fixture
def session_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    for name, value in FIXED_DATES.items():
        monkeypatch.setenv(name, value)


@whole_session
@pytest.mark.parametrize("theme", THEMES)
def test_proposal_under_review(snap_compare, session_env, make_repo, scripted_server, theme):
    scripted_server.script(*review_script())
    app = make_app(
        make_repo(), scripted_server.base_url, "add sub and mul", test_command=QUIET_TESTS
    )
    app.options.flags["theme"] = theme
    assert snap_compare(app, terminal_size=(120, 40), run_before=drive_to_review)


@whole_session
def test_proposal_under_review_on_a_small_terminal(
    snap_compare, session_env, make_repo, scripted_server
):
    scripted_server.script(*review_script())
    app = make_app(
        make_repo(), scripted_server.base_url, "add sub and mul", test_command=QUIET_TESTS
    )
    assert snap_compare(app, terminal_size=(80, 24), run_before=drive_to_review)


def test_proposal_under_review_on_a_large_terminal(
    snap_compare, session_env, make_repo, scripted_server
):
    # 200 columns: Files is shown beside the diff (from 150), the diff still has the most room.
    scripted_server.script(*review_script())
    app = make_app(
        make_repo(), scripted_server.base_url, "add sub and mul", test_command=QUIET_TESTS
    )
    assert snap_compare(app, terminal_size=(200, 60), run_before=drive_to_review)


@whole_session
def test_fix_loop_with_failing_tests_and_a_chat_message(
    snap_compare, session_env, make_repo, scripted_server
):
    scripted_server.script(*fix_loop_script())
    app = make_app(
        make_repo(), scripted_server.base_url, "add mul", plan=False, test_command=QUIET_TESTS
    )
    assert snap_compare(app, terminal_size=(120, 40), run_before=drive_to_fix_loop)


@whole_session
def test_what_is_still_wrong(snap_compare, session_env, make_repo, scripted_server):
    scripted_server.script(*still_wrong_script())
    app = make_app(
        make_repo(), scripted_server.base_url, "add sub", plan=False, test_command=QUIET_TESTS
    )
    assert snap_compare(app, terminal_size=(120, 40), run_before=drive_to_still_wrong)


def test_no_api_key_screen(snap_compare, make_repo):
    app = make_app(make_repo(), "http://127.0.0.1:9/v1", "add sub")

    async def shown(pilot) -> None:
        await wait_for_screen(pilot, app, ProblemScreen)

    assert snap_compare(app, terminal_size=(100, 30), run_before=shown)


def test_shell_pane_after_a_failing_command(snap_compare, session_env, make_repo, scripted_server):
    """The Shell pane under the chat: a command's output, its exit status, the send key."""
    from tests.tui.app_support import send_chat, wait_for

    app = make_app(make_repo(), scripted_server.base_url)

    async def run_command(pilot) -> None:
        await wait_for(pilot, lambda: app.controller.ready)
        await send_chat(pilot, "!printf 'checking calc\\nmul(2, 3) = 5\\n'; exit 1")
        await wait_for(pilot, lambda: "[exit status 1]" in app.shell_pane.output_lines)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_command)
