"""The app when the human accepts on a full disk (issue 52): told in their words (the folder
and the room needed, never "a bug"), nothing of theirs written, the step still under review;
they free space, press `a` again, and it is committed. The real app through Pilot, the real
engine, git and pytest, the repository on a real small file system (tests/disk_support.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import git, repo_at
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, add_sub_app, diff_text, finish_session, reviewing, wait_for

pytestmark = pytest.mark.usefixtures("api_key")


def fill(disk: Path) -> Path:
    """A file taking every byte of `disk` that is left."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize))
    return filler


@whole_session
async def test_an_accept_on_a_full_disk_is_told_keeps_the_step_and_is_made_once_freed(
    small_disk: Path, scripted_server
) -> None:
    repo = repo_at(small_disk / "repo")
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        filler = fill(small_disk)  # the disk fills while the human reads the diff
        await pilot.press("a")

        def told() -> bool:
            """a notification that the disk is full, with the folder"""
            return any(
                "No space left on device in" in n.message and str(repo) in n.message
                for n in app._notifications
            )

        await wait_for(pilot, told)
        said = next(n.message for n in app._notifications if "No space left" in n.message)
        assert "needed" in said and "bug" not in said.lower(), said
        await wait_for(pilot, reviewing(app, 2))  # the same step, asked about again
        assert app.plan_pane.status_of(1) == "awaiting review"
        assert "def sub" in diff_text(app)
        assert app.controller.engine is not None and app.controller.engine.is_running
        filler.unlink()  # the human frees space
        assert git(repo, "log", "--format=%s") == "initial"
        assert git(repo, "status", "--porcelain") == ""
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "--format=%s").splitlines() == ["add sub", "initial"]
    assert len(scripted_server.chat_requests) == 1  # the same proposal, no new model call
