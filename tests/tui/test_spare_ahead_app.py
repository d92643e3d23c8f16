"""The first session on a repository: its shadow's checkout of every file (seconds on a big
repository) is made while the human types the request, as a spare the session then takes
(vcs/spare_ahead.py). The real app through Pilot, the scripted model over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES
from tests.engine_support import SUB
from tests.scripted_server import Reply
from tests.tui.app_support import SIZE, make_app, reviewing, send_chat, wait_for
from tui_engineer.records.recorder import read_record, runs_dir
from tui_engineer.vcs import spare
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare_ahead import WORTH_FROM

pytestmark = pytest.mark.usefixtures("api_key")


def _pool(repo: Path) -> Path:
    with open_repo(repo) as git_repo:
        return spare.pool_for(shadow_home(git_repo))


async def test_the_first_session_takes_the_spare_made_while_its_request_was_typed(
    make_repo, scripted_server
) -> None:
    """A repository big enough for its first checkout to take seconds."""
    files = {f"data/part_{n}.txt": f"{n}\n" for n in range(WORTH_FROM)}
    repo = make_repo({**SAMPLE_FILES, **files})
    scripted_server.script(Reply(text=SUB))
    app = make_app(repo, scripted_server.base_url, plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.phase == "ready")

        def made() -> bool:
            """the first spare to be made before any request"""
            return bool(spare.slots(_pool(repo)))

        await wait_for(pilot, made)
        await send_chat(pilot, "add sub")
        await wait_for(pilot, reviewing(app, 1))
        await app.stop_work()
    (record,) = runs_dir(repo).glob("*.jsonl")
    (shadow,) = [e for e in read_record(record) if e["type"] == "shadow_ready"]
    assert shadow["from_spare"] is True


async def test_a_small_repository_gets_no_spare_ahead(make_repo, scripted_server) -> None:
    """Its first checkout takes a fraction of a second: nothing is made before the request."""
    repo = make_repo()
    app = make_app(repo, scripted_server.base_url, plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.phase == "ready")
        await pilot.pause(0.5)
        assert spare.slots(_pool(repo)) == []
        await app.stop_work()
