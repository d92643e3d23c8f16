"""The TUI while a real model takes its time (replies held at a Gate until the test opens it):
undo mid-plan and in the final dialog, Ctrl+C twice, and a step planned from the human's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import DIV, KEY, SUB, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tui.app_support import (
    SIZE,
    asked,
    make_app,
    reviewing,
    type_text,
    visible_lines,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.screens import QuitScreen


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def titles(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


async def test_ctrl_c_twice_quits_while_the_model_thinks(make_repo, scripted_server) -> None:
    repo = make_repo()
    gate = Gate()
    scripted_server.script(Reply(text=SUB, hold=gate))
    app = make_app(repo, scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await gate.arrived()
        await pilot.press("ctrl+c")
        await wait_for_screen(pilot, app, QuitScreen)
        await pilot.press("ctrl+c")  # a user who means it presses it again
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert titles(repo) == ["initial"]
    assert git(repo, "status", "--porcelain") == ""


async def test_steps_planned_from_what_is_still_wrong_show_the_users_words(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB), Reply(text=plan_reply("Add div")), Reply(text=DIV))
    app = make_app(repo, scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await wait_for(pilot, asked(app, "still_wrong"))
        await type_text(pilot, "no way to divide")
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        await pilot.pause()
        shown = "\n".join(visible_lines(app.plan_pane))
        assert "no way to divide" in shown, shown
        assert "2. Add div" in shown and "1. add sub" in shown
        await app.stop_work()
