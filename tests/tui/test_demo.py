"""`tui-engineer demo`: the real app, the sample repo and the built-in model over real HTTP."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.tui.app_support import (
    SIZE,
    asked,
    demo_app,
    reviewing,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.demo import make_sample_repo
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import RejectReasonScreen, StillWrongScreen, VerdictScreen


def diff_text(app: TuiEngineerApp) -> str:
    lines = [ln for f in app.diff.files for hunk in f.hunks for ln in hunk.lines]
    return "\n".join(line.text for line in lines)


def log(repo: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    return out.stdout.splitlines()


async def test_demo_plans_reacts_to_a_reject_reason_fixes_and_answers_still_wrong(
    tmp_path: Path,
) -> None:
    with demo_app(tmp_path) as (repo, app):
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1))
            await pilot.press("r")
            await wait_for_screen(pilot, app, RejectReasonScreen)
            await type_text(pilot, "check negatives too")
            await pilot.press("enter")
            await wait_for(pilot, reviewing(app, 2))
            assert "sub(3, 5) == -2" in diff_text(app)  # the new proposal follows the reason
            await pilot.press("a")
            await wait_for(pilot, reviewing(app, 3))  # mul: failed once, diagnosed, fixed
            assert app.plan_pane.status_of(2) == "awaiting review"
            assert "return a * b" in diff_text(app)
            await pilot.press("a")
            await wait_for_screen(pilot, app, StillWrongScreen)
            await type_text(pilot, "no way to divide")
            await pilot.press("enter")
            await wait_for(pilot, reviewing(app, 4))
            await pilot.press("a")
            await wait_for_screen(pilot, app, StillWrongScreen)
            await pilot.click("#done")
            await wait_for_screen(pilot, app, VerdictScreen)
            await pilot.click("#level-works")
            await pilot.click("#save")
            await wait_for(pilot, lambda: app.engine is not None and not app.engine.is_running)
            assert not asked(app, "verdict")()
            await pilot.press("q")
    assert log(repo) == ["Add div", "Add mul", "Add sub", "Sample project: add() and its test"]


def test_the_demo_makes_the_folder_it_is_given(tmp_path: Path) -> None:
    """`tui-engineer demo --dir new/folder` made a traceback when the folder did not exist."""
    repo = make_sample_repo(tmp_path / "new" / "folder")
    assert repo.parent == tmp_path / "new" / "folder"
    assert (repo / "calc.py").is_file()
