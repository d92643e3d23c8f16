"""Reviewing as a pair, by keyboard, over the real engine: hunks dropped (the kept ones tested
on exactly their tree before the commit), hand edits in a real $EDITOR program, line comments.
What the model learns is checked at the scripted server."""

from __future__ import annotations

import json
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from tests.conftest import git
from tests.engine_support import plan_reply
from tests.pair_support import FILES, MUL, STRAY, SUB_CODE, SUB_TEST
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    chat_text,
    diff_lines,
    finish_session,
    make_app,
    reviewing,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.engine.reviews.hunks import HunkRef
from tui_engineer.records.recorder import RUNS_FOLDER
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens.pair import (
    CommentScreen,
    HandEditScreen,
    PartialAcceptScreen,
    TakeEditsScreen,
)
from tui_engineer.tui.screens.review import RejectReasonScreen

pytestmark = pytest.mark.usefixtures("api_key")

WITH_STRAY = STRAY + SUB_CODE + SUB_TEST  # sub and its test, after a stray debug print


def record_events(repo: Path) -> list[dict]:
    (record,) = (repo / RUNS_FOLDER).glob("*.jsonl")
    return [json.loads(line) for line in record.read_text().splitlines()]


def seen(app) -> list[str]:
    return (app.controller.session.rt.shadow.path / "seen.log").read_text().split()


def all_text(request) -> str:
    return "\n".join(str(m.get("content", "")) for m in request.messages)


@asynccontextmanager
async def at_first_review(
    repo: Path, server, request: str, *, plan: bool = True
) -> AsyncIterator[tuple[TuiEngineerApp, Pilot]]:
    """The app on `repo` (the model scripted beforehand), once step 1 is under review."""
    app = make_app(repo, server.base_url, request, plan=plan)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        yield app, pilot


@asynccontextmanager
async def sub_and_mul_at_review(
    repo: Path, server, first: str
) -> AsyncIterator[tuple[TuiEngineerApp, Pilot]]:
    """For "add sub and mul": the model plans sub and mul, proposes `first` for sub and MUL for mul;
    the app once sub's proposal is under review."""
    server.script(Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=first), Reply(text=MUL))
    async with at_first_review(repo, server, "add sub and mul") as (app, pilot):
        yield app, pilot


@asynccontextmanager
async def sub_at_review(
    repo: Path, server, *replies: Reply
) -> AsyncIterator[tuple[TuiEngineerApp, Pilot]]:
    """For "add sub" with no plan: the model proposes sub and its test (or `replies`); the app
    once that proposal is under review."""
    server.script(*(replies or (Reply(text=SUB_CODE + SUB_TEST),)))
    async with at_first_review(repo, server, "add sub", plan=False) as (app, pilot):
        yield app, pilot


@whole_session
async def test_a_dropped_hunk_is_left_out_of_the_commit_whose_tests_ran_on_the_kept_tree(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_and_mul_at_review(repo, scripted_server, WITH_STRAY) as (app, pilot):
        assert seen(app)[-1] == "stray"  # the whole proposal was tested
        runs = len(seen(app))
        await pilot.press("n")  # the first hunk: the stray print
        assert app.diff._ref_at(app.diff.cursor) == HunkRef("calc.py", 0)
        await pilot.press("space")
        assert "2 of 3 hunks kept" in str(app.diff.border_subtitle)
        await pilot.press("a")
        await wait_for_screen(pilot, app, PartialAcceptScreen)
        await type_text(pilot, "no debug prints")
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        assert "Step 1 accepted (partial: 2 of 3 hunks, tests re-run)" in chat_text(app)
        # The kept hunks were tested before the commit, on their own tree.
        assert seen(app)[runs:] and set(seen(app)[runs:]) == {"clean"}
        committed = git(repo, "show", "HEAD:calc.py")
        assert "def sub(a, b)" in committed and "debug" not in committed
        assert "debug" not in (repo / "calc.py").read_text()
        body = git(repo, "log", "-1", "--format=%B")
        assert "Partial: 2 of 3 hunks kept; left out: calc.py hunk 1 (no debug prints)" in body
        # Step 2's proposal was asked after the dropped hunk, which it was told about.
        mul_request = all_text(scripted_server.chat_requests[2])
        assert "dropped this hunk of calc.py — reason: no debug prints" in mul_request
        assert '+print("debug")' in mul_request
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    # The run record keeps the decision per hunk.
    decisions = [e for e in record_events(repo) if e["type"] == "decision"]
    partial = next(e for e in decisions if e["dropped"])
    assert partial["dropped"] == [["calc.py", 0, "no debug prints"]]
    assert partial["kept"] == "partial: 2 of 3 hunks, tests re-run"


@whole_session
async def test_kept_hunks_that_fail_their_tests_stay_in_review_and_say_so(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_at_review(repo, scripted_server) as (app, pilot):
        await pilot.press("n", "space")  # drop calc.py's sub, keep its test
        await pilot.press("a")
        await wait_for_screen(pilot, app, PartialAcceptScreen)
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        assert "Not committed: the kept hunks fail their tests" in chat_text(app)
        assert app.plan_pane.status_of(1) == "awaiting review"
        assert git(repo, "log", "--format=%s").splitlines() == ["initial"]
        assert app.test_pane.failures  # the failing run of the kept hunks is shown
        assert "1 of 2 hunks kept" in str(app.diff.border_subtitle)  # still dropped, dimmed
        await pilot.press("space")  # keep it again: the whole proposal, which passed
        await pilot.press("a")
        await finish_session(pilot, app)
    assert git(repo, "log", "--format=%s").splitlines() == ["add sub", "initial"]
    assert "def sub" in git(repo, "show", "HEAD:calc.py")


def scripted_editor(folder: Path) -> Path:
    """A real $EDITOR program: it adds a function at the end of the file it is given."""
    program = folder / "editor.py"
    program.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "with open(sys.argv[-1], 'a') as file:\n"
        "    file.write('\\n\\ndef twice(a):\\n    return a + a\\n')\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


@whole_session
async def test_a_hand_edit_is_tested_again_marked_and_committed_and_the_model_is_told(
    make_repo, scripted_server, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("EDITOR", str(scripted_editor(tmp_path)))
    monkeypatch.delenv("VISUAL", raising=False)
    repo = make_repo(FILES)
    async with sub_and_mul_at_review(repo, scripted_server, WITH_STRAY) as (app, pilot):
        runs = len(seen(app))
        await pilot.press("n", "space")  # the stray print: dropped
        await pilot.press("n", "o")  # sub's hunk: the editor adds `twice` below it
        await wait_for(pilot, reviewing(app, 2))
        assert len(seen(app)) > runs  # tested again
        assert "edited by you" in str(app.diff.border_title)
        assert "Step 1 edited by you, tested again: tests pass" in chat_text(app)
        assert "def twice(a):" in diff_lines(app)
        # The stray print's hunk did not change: it is still dropped.
        assert "2 of 3 hunks kept" in str(app.diff.border_subtitle)
        await pilot.press("a")
        await wait_for_screen(pilot, app, PartialAcceptScreen)
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 3))
        committed = git(repo, "show", "HEAD:calc.py")
        assert "def twice(a)" in committed and "def sub(a, b)" in committed
        assert "debug" not in committed
        body = git(repo, "log", "-1", "--format=%B")
        assert "Edited by you during the review." in body
        assert "Partial: 2 of 3 hunks kept; left out: calc.py hunk 1." in body
        mul_request = all_text(scripted_server.chat_requests[2])
        assert "the human edited your change by hand" in mul_request
        assert "+def twice(a):" in mul_request
        assert "dropped this hunk of calc.py:" in mul_request  # no reason given
        await pilot.press("a")
        await finish_session(pilot, app)


@whole_session
async def test_line_comments_are_listed_and_a_reject_sends_them_as_one_review(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_at_review(
        repo, scripted_server, Reply(text=SUB_CODE + SUB_TEST), Reply(text=SUB_CODE + SUB_TEST)
    ) as (app, pilot):
        await pilot.press("n", "down", "down", "down", "down", "down", "i")
        await wait_for_screen(pilot, app, CommentScreen)
        await type_text(pilot, "say what sub does")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Comment on calc.py:" in chat_text(app))
        assert "1 comment" in str(app.diff.border_subtitle)
        await pilot.press("r")
        await wait_for_screen(pilot, app, RejectReasonScreen)
        await type_text(pilot, "document it")
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        again = all_text(scripted_server.chat_requests[1])
        assert "document it" in again
        assert "Review comments:\n- calc.py:" in again
        assert ": say what sub does" in again
        await pilot.press("s")
        await finish_session(pilot, app)


@whole_session
async def test_with_no_editor_to_run_the_file_opens_in_the_apps_own_editor(
    make_repo, scripted_server, monkeypatch
) -> None:
    # What a browser (serve) always gets: no terminal to hand over.
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setattr("tui_engineer.tui.editor.FALLBACKS", ("no-such-editor-here",))
    repo = make_repo(FILES)
    async with sub_at_review(repo, scripted_server) as (app, pilot):
        await pilot.press("n", "o")
        await wait_for_screen(pilot, app, HandEditScreen)
        area = app.screen.query_one(TextArea)
        assert area.cursor_location[0] == 10  # the hunk's first line (line 11)
        area.move_cursor(area.document.end)
        area.insert("\n\ndef half(a):\n    return a / 2\n")
        await pilot.press("ctrl+s")
        await wait_for(pilot, reviewing(app, 2))
        assert "edited by you" in str(app.diff.border_title)
        await pilot.press("a")
        await finish_session(pilot, app)
    assert "def half(a)" in git(repo, "show", "HEAD:calc.py")


@whole_session
async def test_your_own_edits_during_a_review_are_offered_taken_in_tested_and_committed(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_at_review(repo, scripted_server) as (app, pilot):
        # In their own editor, the user documents the module while the step is under review.
        calc = repo / "calc.py"
        calc.write_text(calc.read_text().replace('"""A calculator."""', '"""A calculator!"""'))
        await wait_for_screen(pilot, app, TakeEditsScreen)
        await pilot.click("#take")
        await wait_for(pilot, reviewing(app, 2))
        assert "edited by you" in str(app.diff.border_title)
        assert '"""A calculator!"""' in diff_lines(app)
        await pilot.press("a")
        await finish_session(pilot, app)
    committed = git(repo, "show", "HEAD:calc.py")
    assert '"""A calculator!"""' in committed and "def sub(a, b)" in committed
    assert git(repo, "status", "--porcelain") == ""  # the user's file is the one committed


async def test_your_own_edits_not_taken_in_are_never_written_over(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_at_review(repo, scripted_server) as (app, pilot):
        calc = repo / "calc.py"
        mine = calc.read_text().replace('"""A calculator."""', '"""Mine."""')
        calc.write_text(mine)
        await wait_for_screen(pilot, app, TakeEditsScreen)
        await pilot.click("#later")
        await wait_for(pilot, lambda: "stay in your files" in chat_text(app))
        await pilot.press("a")  # refused: it would write over the user's edit
        await wait_for(pilot, lambda: "Nothing was written" in chat_text(app))
        await app.stop_work()
    assert calc.read_text() == mine
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]


@whole_session
async def test_comments_on_an_accepted_step_go_into_its_commit_and_to_the_model(
    make_repo, scripted_server
) -> None:
    repo = make_repo(FILES)
    async with sub_and_mul_at_review(repo, scripted_server, SUB_CODE + SUB_TEST) as (app, pilot):
        await pilot.press("n", "down", "down", "down", "down", "down", "down", "i")
        await wait_for_screen(pilot, app, CommentScreen)
        await type_text(pilot, "fine, but name it minus next time")
        await pilot.press("enter")
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        body = git(repo, "log", "-1", "--format=%B")
        assert "Review comments:\n- calc.py:16 (`def sub(a, b):`): fine" in body
        told = all_text(scripted_server.chat_requests[2])
        assert "accepted with these review comments" in told
        assert "name it minus next time" in told
        await pilot.press("a")
        await finish_session(pilot, app)
    decision = next(e for e in record_events(repo) if e["type"] == "decision")
    assert decision["comments"] == [["calc.py", 16, "fine, but name it minus next time"]]
