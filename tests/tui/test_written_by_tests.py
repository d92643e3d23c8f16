"""The files a step's test runs wrote, in the TUI's review (issue 33, part 2): shown after the
step's diff, apart ("written by the tests"), dimmed and left out of the commit; space keeps one,
as it keeps a hunk. The real engine, real pytest runs in the shadow, the scripted model."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.engine.test_written_by_tests import FILES, FIX
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    chat_text,
    finish_session,
    make_app,
    reviewing,
    visible_lines,
    wait_for,
)

pytestmark = pytest.mark.usefixtures("api_key")


def file_at_cursor(app) -> str:
    diff = app.diff
    return diff._files[diff._rows[diff.cursor].file].path


@whole_session
async def test_files_the_tests_wrote_are_shown_apart_and_committed_only_when_kept(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    app = make_app(repo, scripted_server.base_url, "fix add", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert [f.path for f in app.diff.files] == ["calc.py", "coverage.dat", "tests/snapshot.txt"]
        assert {ref.path for ref in app.diff.units()} == {"calc.py"}  # the step's hunks only
        assert (
            "Written by the tests, not committed: coverage.dat (new), tests/snapshot.txt (new)"
            in chat_text(app)
        )
        shown = "\n".join(visible_lines(app.diff))
        assert "A coverage.dat" in shown and "written by the tests" in shown
        assert "written by the tests  (not committed)" in shown
        await pilot.press("n", "n")  # calc.py's hunk, then the first file the tests wrote
        assert file_at_cursor(app) == "coverage.dat"
        await pilot.press("space")
        assert app.diff.kept_written == {"coverage.dat"}
        assert "1 of 2 files the tests wrote kept" in str(app.diff.border_subtitle)
        assert "(kept)" in "\n".join(visible_lines(app.diff))
        await pilot.press("a")
        await finish_session(pilot, app)
    changed = git(repo, "show", "--name-status", "--format=", "HEAD").splitlines()
    assert changed == ["M\tcalc.py", "A\tcoverage.dat"]
    assert not (repo / "tests" / "snapshot.txt").exists()


@whole_session
async def test_an_accept_leaves_them_out(make_repo, scripted_server) -> None:
    repo = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    app = make_app(repo, scripted_server.base_url, "fix add", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "show", "--name-status", "--format=", "HEAD").splitlines() == ["M\tcalc.py"]
    assert git(repo, "status", "--porcelain") == ""
