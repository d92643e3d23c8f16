"""The TUI in a repository holding `caf\\xe9.txt` (Latin-1, issue 24): the session starts, the
Files pane and the diff show the name readably (U+FFFD), accept commits exactly that file and
undo takes it back."""

from __future__ import annotations

import pytest
from textual.widgets import Markdown

from tests.conftest import git
from tests.engine.test_non_utf8_names import CONTENT, NAME, RAW, SHOWN, latin1_repo, tracked
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    KEY,
    edit,
    make_app,
    reviewing,
    visible_lines,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.screens import DirtyTreeScreen, StillWrongScreen

WIDE = (160, 40)  # the Files pane shows
LAIT = "caf\u00e9 au lait\n"


@whole_session
async def test_the_name_shows_readably_and_accept_and_undo_keep_it_exact(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = latin1_repo(make_repo)
    scripted_server.script(Reply(text=edit(SHOWN, CONTENT, LAIT)))
    app = make_app(repo, scripted_server.base_url, f"edit {SHOWN}", plan=False)
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        tree = app.query_one(RepoTree)
        await wait_for(pilot, lambda: tree.loading_count == 0)
        await pilot.pause()
        assert any(SHOWN in line for line in visible_lines(tree)), visible_lines(tree)
        diff = "\n".join(visible_lines(app.diff))
        assert f"M {SHOWN}" in diff, diff
        assert "café au lait" in diff
        assert "\\udce9" not in diff and "\\351" not in diff
        assert app.diff.files[0].path == NAME  # the exact name, for the tree and the links
        sources = "\n".join(m.source for m in app.chat.query(Markdown))
        assert f"edited [`{SHOWN}`](diff:{SHOWN}) (+1 −1)" in sources, sources
        assert app.diff.focus_file(SHOWN)  # where that chat link leads
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        assert (repo / NAME).read_text(encoding="utf-8") == LAIT
        assert tracked(repo) == sorted([RAW, b"calc.py", b"tests/test_calc.py"])
        await pilot.click("#undo")
        await wait_for(pilot, lambda: app.plan_pane.status_of(1) == "undone")
        await pilot.press("q")
    assert (repo / NAME).read_text(encoding="utf-8") == CONTENT
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%s") == "latin-1 name"


async def test_an_uncommitted_file_so_named_is_listed_readably(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = make_repo()
    (repo / NAME).write_text(CONTENT, encoding="utf-8")
    app = make_app(repo, scripted_server.base_url, "add sub", plan=False)
    async with app.run_test(size=WIDE) as pilot:
        await wait_for_screen(pilot, app, DirtyTreeScreen)
        body = str(app.screen.query_one("#dialog-body").render())
        assert f"  {SHOWN}" in body, body
        await pilot.click("#quit")
    assert (repo / NAME).read_text(encoding="utf-8") == CONTENT


async def test_a_latin1_file_picked_in_the_files_pane_is_shown_readably(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its name and its Latin-1 contents read with U+FFFD (it said "cannot show" before)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = make_repo()
    (repo / NAME).write_bytes(b"caf\xe9 latin\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "latin-1")
    app = make_app(repo, scripted_server.base_url)
    async with app.run_test(size=WIDE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        app.query_one(RepoTree).post_message(RepoTree.FileSelected(NAME))
        await wait_for(pilot, lambda: not app.diff.showing_diff)
        await pilot.pause()
        shown = "\n".join(visible_lines(app.diff))
        assert SHOWN in shown and "caf\ufffd latin" in shown, shown
        await pilot.press("q")
