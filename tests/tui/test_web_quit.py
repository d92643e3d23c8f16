"""A closed browser tab under `tui-engineer serve`: textual's web driver posts ExitApp to the
app (not a key, not a signal). The session must stop as cleanly as on `q` or SIGTERM, also when
two stop requests arrive (Ctrl+C at the server signals the app and closes its tab)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual import messages

from tests.tiers import whole_session
from tests.tui.app_support import SIZE, reviewing, wait_for
from tui_engineer.demo import DEFAULT_REQUEST, DemoServer, demo_flags, make_sample_repo
from tui_engineer.records.listing import list_runs
from tui_engineer.session.run import RunOptions
from tui_engineer.tui.app import TuiEngineerApp


def shadow_folders() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
    return [p for p in folder.glob("*/*") if p.is_dir()] if folder.is_dir() else []


@whole_session
@pytest.mark.parametrize("requests", [1, 2], ids=["closed-tab", "closed-tab-and-signal"])
async def test_a_closed_browser_tab_removes_every_shadow_worktree(
    tmp_path: Path, requests: int
) -> None:
    repo = make_sample_repo(tmp_path)
    with DemoServer(pace=0) as server:
        options = RunOptions(request=DEFAULT_REQUEST, repo=repo, flags=demo_flags(server.base_url))
        app = TuiEngineerApp(options, deterministic=True)
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1), timeout=60)
            # Step 2 is being prepared in its own shadow while step 1 is reviewed.
            await wait_for(pilot, lambda: any("-next" in p.name for p in shadow_folders()))
            app.post_message(messages.ExitApp())  # what the web driver sends on "quit"
            if requests == 2:  # the second arrives while the first is cleaning up
                await wait_for(pilot, lambda: app.quitting)  # (a flag: the stop can be quick)
                app.post_message(messages.ExitApp())
            await wait_for(pilot, lambda: not app.is_running, timeout=60)
            # Gone by the time the app stops: in a real process nothing runs after that.
            assert shadow_folders() == []
        assert app.return_code == 0
    [run] = list_runs(repo)
    assert run.outcome == "quit"
