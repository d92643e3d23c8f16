"""What a new user meets first: keys from the first frame, dialogs where Escape is no decision,
a verdict with nothing chosen for you."""

from __future__ import annotations

import json

import pytest

from tests.scripted_server import Reply
from tests.tui.app_support import (
    KEY,
    SIZE,
    SUB,
    asked,
    make_app,
    reviewing,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import QuitScreen, StillWrongScreen, VerdictScreen


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


async def test_with_a_request_keys_work_before_the_first_proposal(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB, delay=30))  # the model is still thinking
    app = make_app(repo, scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.busy.startswith("model"))
        assert app.focused is not app.chat_input
        footer_keys = {b.binding.key for b in app.active_bindings.values() if b.binding.show}
        assert {"a", "r", "q", "c"} <= footer_keys  # the footer shows the keys
        await pilot.press("q")
        await wait_for_screen(pilot, app, QuitScreen)
        assert app.chat_input.value == ""  # "q" was a key, not text for the model
        await pilot.click("#quit")


async def test_without_a_request_the_chat_box_takes_the_request(make_repo, scripted_server) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.ready)
        assert app.focused is app.chat_input


async def test_escape_on_what_is_still_wrong_is_not_done(make_repo, scripted_server) -> None:
    scripted_server.script(Reply(text=SUB))
    app = make_app(make_repo(), scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert isinstance(app.screen, StillWrongScreen)  # still asked, nothing decided
        assert app.reviewer.question == "still_wrong"
        await pilot.click("#done")
        await wait_for_screen(pilot, app, VerdictScreen)
        await pilot.press("escape")  # not "skip" either
        await pilot.pause(0.2)
        assert isinstance(app.screen, VerdictScreen)
        await pilot.click("#skip")
        await wait_for(pilot, lambda: app.engine is not None and not app.engine.is_running)


async def test_the_verdict_has_no_answer_chosen_for_you(make_repo, scripted_server) -> None:
    scripted_server.script(Reply(text=SUB))
    app = make_app(make_repo(), scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app))
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        await pilot.click("#done")
        await wait_for(pilot, asked(app, "verdict"))
        await wait_for_screen(pilot, app, VerdictScreen)
        assert app.screen.query_one("#levels").pressed_button is None
        await pilot.press("enter")  # Enter in the comment box with no level picked
        await pilot.pause(0.2)
        assert isinstance(app.screen, VerdictScreen)  # asks for a level instead of guessing
        await pilot.click("#level-perfect")
        await pilot.click("#save")
        await wait_for(pilot, lambda: app.engine is not None and not app.engine.is_running)
    record = next((make_repo_root := app.options.repo).glob(".tui-engineer/runs/*.jsonl"))
    verdicts = [json.loads(line) for line in record.read_text().splitlines() if '"verdict"' in line]
    assert verdicts and verdicts[-1]["perfect"] is True and verdicts[-1]["worked"] is True
    assert make_repo_root.exists()
