"""An error in a session worker that is not a UserError (issue 24: the TUI showed "ready", an
empty chat and nothing) reaches the screen with the way out, and the next request runs."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.engine.test_worker_errors import raise_like_issue_24
from tests.tiers import whole_session
from tests.tui.app_support import (
    KEY,
    SIZE,
    add_sub_app,
    chat_text,
    make_app,
    reviewing,
    send_chat,
    session_ended,
    wait_for,
)
from tui_engineer.vcs import submodules


def break_like_issue_24(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> None:
    """`owner.name` raises issue 24's UnicodeDecodeError, and the API key is set on the same
    monkeypatch (not by the api_key fixture): a test that undoes the bug sets the key again."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(owner, name, raise_like_issue_24)


@whole_session
async def test_a_bug_in_the_session_worker_is_shown_and_the_next_request_runs(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # The bug on a monkeypatch of its own, undone mid-test: undoing the test's own would undo
    # hermetic_env's too (this venv's python first on PATH, for a venv run without activating).
    bug = pytest.MonkeyPatch()
    request.addfinalizer(bug.undo)  # and undone if the test fails before
    break_like_issue_24(bug, submodules, "submodules")
    repo = make_repo()
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "internal error" in chat_text(app))
        shown = chat_text(app)
        assert "UnicodeDecodeError" in shown and "a bug in tui-engineer" in shown
        assert "Type a request to start again" in shown
        await wait_for(
            pilot, lambda: any("internal error" in n.message for n in app._notifications)
        )
        assert app.status.phase.startswith("stopped")
        # The way out works: with the bug gone, the next request reaches a review.
        bug.undo()
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        await wait_for(pilot, session_ended(app))
        await send_chat(pilot, "add sub")
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("q")
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_a_bug_in_the_start_up_checks_is_shown_and_q_quits(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_engineer.session import start  # where every front end's checks run

    break_like_issue_24(monkeypatch, start, "prepare")
    app = make_app(make_repo(), scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "internal error" in chat_text(app))
        shown = chat_text(app)
        assert "in the start-up checks" in shown and "press q to quit" in shown
        assert not app.controller.ready
        await send_chat(pilot, "add sub")  # not dropped in silence, nor "send it again in a moment"
        await wait_for(
            pilot, lambda: any("start-up failed" in n.message for n in app._notifications)
        )
        await pilot.press("escape")
        await pilot.press("q")
        await wait_for(pilot, lambda: app._exit_renderables is not None or not app.is_running)
    assert scripted_server.chat_requests == []


@whole_session
async def test_a_bug_in_the_files_pane_listing_is_shown_and_the_session_goes_on(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui_engineer.tui.panes import file_tree

    break_like_issue_24(monkeypatch, file_tree, "list_fresh")
    app = add_sub_app(make_repo(), scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "internal error in listing the Files pane" in chat_text(app))
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("q")
