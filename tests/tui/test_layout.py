"""Layout (issue 12): the diff gets the room, panes resize / collapse / maximize and their sizes
are remembered, tabs say how to switch, and the chat and tests panes show what matters once."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Markdown, Tabs

from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, SUB, make_app, plan_reply, reviewing, wait_for
from tui_engineer.tui.layout import PaneSizes, load_sizes

pytestmark = pytest.mark.usefixtures("api_key")


def footer_keys(app) -> set[str]:
    return {key for key, active in app.screen.active_bindings.items() if active.binding.show}


@whole_session
async def test_a_review_at_120x40_gives_the_diff_the_room_and_shows_edits_briefly(
    make_repo, scripted_server
) -> None:
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text="Adding sub; see calc/__init__.py style.\n\n" + SUB),
        Reply(text=SUB, delay=30),
    )
    app = make_app(make_repo(), scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.pause()
        assert app.diff.outer_size.width >= 0.6 * SIZE[0]
        assert app.plan_pane.outer_size.height == 2 + 2  # two steps and the border
        sources = "\n".join(m.source for m in app.chat.query(Markdown))
        assert "<<<<<<< SEARCH" not in sources and "=======" not in sources
        assert "edited [`calc.py`](diff:calc.py) (+4 −0)" in sources
        assert "`calc/__init__.py`" in sources  # a path is code, not bold "init"
        log = "\n".join(app.test_pane.lines)
        assert "generated xml file" not in log and "passed in" not in log
        assert "test session starts" not in log
        assert "cost unknown" in str(app.status.render())  # the one cost format
        await app.stop_work()


@whole_session
async def test_f_maximizes_the_focused_pane_and_b_shows_files_remembered(
    make_repo, scripted_server, tmp_path: Path
) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    app.layout_file = tmp_path / "layout.json"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.press("escape")  # out of the chat box, to the diff
        await pilot.press("f")
        assert app.screen.maximized is app.diff
        await pilot.press("f")
        assert app.screen.maximized is None
        assert not app.screen.query_one("#pane-tree").display  # 120 columns: Files hidden
        await pilot.press("b")
        await pilot.pause()
        assert app.screen.query_one("#pane-tree").display
        chat = app.chat.outer_size.width
        await pilot.press("plus")
        await pilot.pause()
        assert app.chat.outer_size.width == chat + 4
    assert load_sizes(app.layout_file) == PaneSizes(26, 44, True)
    again = make_app(app.options.repo, scripted_server.base_url)
    again.layout_file = app.layout_file
    async with again.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: again.controller.ready)
        assert again.screen.query_one("#pane-tree").display  # remembered
        assert again.chat.outer_size.width == chat + 4


@whole_session
async def test_tabs_mode_shows_how_to_switch_and_escape_leaves_a_file_view(
    make_repo, scripted_server
) -> None:
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=(90, 30)) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.press("escape")
        assert {"less_than_sign", "greater_than_sign"} <= footer_keys(app)
        await pilot.press("greater_than_sign")
        assert app.screen.query_one(Tabs).active == "tab-tests"
        await pilot.press("less_than_sign", "less_than_sign")
        assert app.screen.query_one(Tabs).active == "tab-plan"
    wide = make_app(make_repo(name="wide"), scripted_server.base_url)
    async with wide.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: wide.controller.ready)
        await pilot.press("escape")
        assert "less_than_sign" not in footer_keys(wide)  # no tabs: no tab keys
        wide.diff.show_file("calc.py", "def add(a, b):\n    return a + b\n")
        assert not wide.diff.showing_diff
        await pilot.press("escape")
        assert wide.diff.showing_diff
