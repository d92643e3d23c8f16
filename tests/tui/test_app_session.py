"""The TUI over the real engine, by keyboard: plans, fix loops, accept, reject, chat, undo."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import git
from tests.engine_support import edit, plan_reply
from tests.scripted_server import Gate, Reply
from tests.tiers import whole_session
from tests.timing_support import titles
from tests.tui.app_support import (
    MUL_BUGGY,
    MUL_FIX,
    SIZE,
    SUB,
    add_sub_app,
    chat_text,
    diff_lines,
    finish_session,
    make_app,
    reviewing,
    send_chat,
    session_ended,
    sub_and_mul_app,
    type_text,
    wait_for,
    wait_for_screen,
)
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.screens import RejectReasonScreen, StillWrongScreen, VerdictScreen

pytestmark = pytest.mark.usefixtures("api_key")


def sub_then_mul_fixed() -> list[Reply]:
    """Sub passes; mul fails its test, is diagnosed and fixed."""
    return [
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds instead of multiplying."),
        Reply(text=MUL_FIX),
    ]


async def test_plan_with_a_failing_step_fixed_then_accepted_commits_both(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(*sub_then_mul_fixed())
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert app.plan_pane.status_of(1) == "awaiting review"
        assert app.plan_pane.status_of(2) == "pending"
        await pilot.press("a")
        await wait_for(pilot, lambda: app.plan_pane.rows[2].detail == "1/3")  # fixing
        await wait_for(pilot, reviewing(app, 2))
        assert app.test_pane.failures == []  # the fix made the suite pass
        chat = "".join(m.source for m in app.chat.query("Markdown"))
        assert "mul adds instead" in chat  # the diagnosis streamed into the chat
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
    assert "a * b" in (repo / "calc.py").read_text()
    assert app.plan_pane.status_of(2) == "accepted"


async def test_the_plan_streams_as_a_planning_line_then_shows_as_a_list_of_steps(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    plan = plan_reply("Add sub", "Add mul")
    half = len(plan) // 2
    scripted_server.script(
        Reply(chunks=[plan[:half], plan[half:]], chunk_delay=0.5),
        Reply(text=SUB, delay=30),  # step 1's proposal: not needed here
    )
    app = make_app(repo, scripted_server.base_url, "add sub and mul")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "characters)" in chat_text(app))  # part of the plan is in
        assert "Planning… (" in chat_text(app)
        assert '{"steps"' not in chat_text(app)  # no raw JSON
        await wait_for(pilot, lambda: "Plan (2 steps):" in chat_text(app))
        assert "1. Add sub" in chat_text(app) and "2. Add mul" in chat_text(app)
        assert '{"steps"' not in chat_text(app) and "Planning…" not in chat_text(app)
        await app.stop_work()


@whole_session
async def test_reject_with_a_reason_brings_a_new_proposal_and_the_model_sees_it(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    app = add_sub_app(
        repo, scripted_server, Reply(text=SUB), Reply(text=SUB.replace("a - b", "-(b - a)"))
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert "sandbox: local" in str(app.status.render())  # where the tests ran
        app.status.deterministic = False  # which bwrap depends on the machine: not in snapshots
        shown = str(app.status.render())
        assert "sandbox: local (system bwrap)" in shown or "local (bundled bwrap)" in shown
        app.status.deterministic = True
        await pilot.press("r")
        await wait_for_screen(pilot, app, RejectReasonScreen)
        await type_text(pilot, "use a plain subtraction")  # 'a', 's', 'r': no keys fire
        assert app.controller.reviewer.question == "review"
        await pilot.press("enter")
        await wait_for(pilot, reviewing(app, 2))
        assert "use a plain subtraction" in scripted_server.chat_requests[1].messages[-1]["content"]
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["add sub", "initial"]
    assert "-(b - a)" in (repo / "calc.py").read_text()


@whole_session
async def test_review_keys_do_not_fire_while_typing_in_the_chat_box(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("c")  # the chat box
        await type_text(pilot, "a s r e u t d q")
        assert app.chat_input.value == "a s r e u t d q"
        assert app.controller.reviewer.question == "review" and len(app.screen_stack) == 1
        await pilot.press("escape", "s")  # out of the box, s skips the step
        await finish_session(pilot, app)
    assert titles(repo) == ["initial"]
    assert app.plan_pane.status_of(1) == "skipped"


@whole_session
async def test_chat_message_during_a_fix_loop_reaches_the_fix_call(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    diagnosis = Gate()  # held while the human types: a delay was outlasted at load 15+
    scripted_server.script(
        Reply(text=MUL_BUGGY), Reply(text="mul adds.", hold=diagnosis), Reply(text=MUL_FIX)
    )
    app = make_app(repo, scripted_server.base_url, "add mul", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.busy == "model: diagnose")
        await diagnosis.arrived()
        await send_chat(pilot, "multiply")
        assert app.controller.inbox.qsize() == 1  # queued: the diagnosis call is still out
        diagnosis.open()
        await wait_for(pilot, reviewing(app, 1))
        propose, diagnose, fix = scripted_server.chat_requests
        assert any("multiply" in m["content"] for m in fix.messages)
        notes = [str(w.render()) for w in app.chat.query(".chat-you")]
        assert any("delivered to step 1's fix call" in note for note in notes)
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["add mul", "initial"]


@whole_session
async def test_a_fix_loop_shows_each_attempt_in_the_diff_and_tree_before_review(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds.", delay=0.5),  # the diagnosis: the buggy attempt is on screen
        Reply(text=MUL_FIX, delay=0.5),
    )
    app = make_app(repo, scripted_server.base_url, "add mul", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.busy == "model: diagnose")
        assert (
            app.controller.reviewer.question is None
        )  # nothing to review yet: this is work in progress
        assert "    return a + b  # x" in diff_lines(app)
        assert "in progress" in str(app.diff.border_title)
        tree = app.screen.query_one(RepoTree)
        assert tree.marks == {"calc.py": "M", "tests/test_calc.py": "M"}
        await wait_for(pilot, lambda: app.status.busy == "model: fix")
        fixed = "    return a * b"
        await wait_for(pilot, lambda: fixed in diff_lines(app))
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("s")
        await finish_session(pilot, app)


@whole_session
async def test_undo_takes_back_the_last_accepted_step(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await pilot.press("u")  # refused: a proposal is under review
        assert titles(repo) == ["initial"]
        await pilot.press("a")
        await wait_for_screen(pilot, app, StillWrongScreen)
        assert titles(repo) == ["add sub", "initial"]
        assert "1 committed" in str(app.screen.query_one("#dialog-body").render())
        await pilot.click("#undo")
        await wait_for(pilot, lambda: titles(repo) == ["initial"])
        await wait_for(pilot, lambda: app.plan_pane.status_of(1) == "undone")
        # The open dialog follows the undo (its body is redrawn on a later refresh than the plan
        # pane's: looked at once, a loaded machine saw "1 committed" still).
        await wait_for(
            pilot, lambda: "0 committed" in str(app.screen.query_one("#dialog-body").render())
        )
        await pilot.click("#done")
        await wait_for_screen(pilot, app, VerdictScreen)
        await pilot.click("#skip")
        await wait_for(pilot, session_ended(app))
        await pilot.press("q")
    assert "sub" not in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_the_tests_pane_shows_the_affected_run_and_the_full_suite_under_review(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(*sub_then_mul_fixed())
    # This interpreter has pytest-testmon: affected tests first (the default).
    command = f"{sys.executable} -m pytest -q"
    app = make_app(
        repo,
        scripted_server.base_url,
        "add",
        test_command=command,
        full_tests_always=False,
        affected_after_seconds=0,  # a quick suite: narrowed anyway
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert app.test_pane.runs_text == ""  # the first run here is the whole suite
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        runs = app.test_pane.runs_text
        # The fix re-ran the failing test, then the affected ones, then the full suite once.
        assert [part.split(":")[0] for part in runs.splitlines()] == ["failing", "affected", "full"]
        assert "full: 2 passed" in runs  # test_add and the new test_mul
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]


@whole_session
async def test_the_plan_shows_the_next_step_ready_while_one_is_reviewed(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    mul = edit(
        "calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    )
    app = sub_and_mul_app(repo, scripted_server, mul, pipeline=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "prepared")
        assert app.plan_pane.status_of(1) == "awaiting review"
        assert str(app.diff.border_title) == "Diff — step 1"  # its preparation is not shown yet
        await pilot.press("a")
        await wait_for(pilot, reviewing(app, 2))
        assert len(scripted_server.chat_requests) == 3  # step 2 was not proposed again
        await pilot.press("a")
        await finish_session(pilot, app)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
