"""The TUI while a real model takes its time (replies held at a Gate until the test opens it):
undo mid-plan and in the final dialog, Ctrl+C twice, and a step planned from the human's words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, SUB
from tests.scripted_server import Gate, Reply
from tests.tui.app_support import (
    SIZE,
    make_app,
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
