"""What an editor is shown of engine events (acp/updates.py): failing runs name their tests and
show the output's end, old failures are named as old, a test-first step shows both runs, a
skipped step says so in its plan entry, and a reply's edit blocks never reach the chat."""

from __future__ import annotations

from acp.schema import AgentMessageChunk, AgentPlanUpdate, ToolCallProgress, ToolCallStart

from tui_engineer.acp.updates import Translator
from tui_engineer.engine import events as ev


def step(index: int, title: str) -> ev.StepInfo:
    return ev.StepInfo(index, title, title, (), "pytest", ())


def text_of(update) -> str:
    return update.content[0].content.text


def test_a_failing_run_names_its_tests_old_failures_and_shows_the_end_of_its_output(
    tmp_path,
) -> None:
    shown = Translator(tmp_path)
    (started,) = shown.updates(ev.TestsStarted(step=1, command="pytest", scope="affected"))
    assert isinstance(started, ToolCallStart) and started.kind == "execute"
    assert started.status == "in_progress" and started.title == "Tests (affected): pytest"
    (finished,) = shown.updates(
        ev.TestsFinished(
            step=1, ok=False, summary="1 passed, 1 failed in 0.2s", passed=1, failed=1,
            errors=0, skipped=0, duration=0.2, failing=("tests/test_calc.py::test_mul",),
            scope="affected", output_tail="E   assert 7 == 12\n",
            old_failing=("tests/test_io.py::test_net",),
        )
    )  # fmt: skip
    assert isinstance(finished, ToolCallProgress) and finished.status == "failed"
    assert finished.tool_call_id == started.tool_call_id
    text = text_of(finished)
    assert "Failing: tests/test_calc.py::test_mul" in text
    assert "Failing before the session too (not this step's): tests/test_io.py::test_net" in text
    assert "assert 7 == 12" in text


def test_a_test_first_proposal_shows_both_runs_and_its_files_old_and_new(tmp_path) -> None:
    (tmp_path / "calc.py").write_text("old\n")
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "calc.py").write_text("new\n")
    (shadow / "tests").mkdir()
    (shadow / "tests" / "test_new.py").write_text("def test_x(): pass\n")
    shown = Translator(tmp_path, shadow=lambda: shadow)
    (call,) = shown.updates(
        ev.ProposalReady(
            step=1, title="Add sub", diff="…", tests_ok=True, summary="2 passed", attempts=0,
            changes=(("M", "calc.py"), ("A", "tests/test_new.py")),
            test_runs=("before the change: test_sub failed, as it should",
                       "after the change (full): 2 passed in 0.1s"),
        )
    )  # fmt: skip
    assert call.kind == "edit" and call.status == "pending"
    modified, added, summary = call.content
    assert (modified.path, modified.old_text, modified.new_text) == (
        str(tmp_path / "calc.py"),
        "old\n",
        "new\n",
    )
    assert added.old_text is None and added.new_text == "def test_x(): pass\n"
    assert "before the change: test_sub failed" in summary.content.text
    assert "after the change (full): 2 passed" in summary.content.text


def test_a_proposal_says_which_old_failures_it_fixed_and_which_it_still_fails(tmp_path) -> None:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    shown = Translator(tmp_path, shadow=lambda: shadow)
    (call,) = shown.updates(
        ev.ProposalReady(
            step=1, title="Fix add", diff="…", tests_ok=True, summary="2 passed", attempts=1,
            fixed=("tests/test_calc.py::test_add",),
            still_failing=("tests/test_calc.py::test_div",),
            old_failures=("tests/test_calc.py::test_div", "tests/test_io.py::test_net"),
        )
    )  # fmt: skip
    text = call.content[-1].content.text
    assert "Now passes (failed before this session): tests/test_calc.py::test_add" in text
    assert "Still failing, and your change runs through it" in text


def test_plan_entries_follow_the_steps(tmp_path) -> None:
    shown = Translator(tmp_path)
    shown.updates(ev.PlanReady(steps=(step(1, "Add sub"), step(2, "Add mul"))))
    shown.updates(ev.StepStarted(index=1, title="Add sub"))
    shown.updates(ev.StepCommitted(step=1, title="Add sub", sha="a" * 40))
    shown.updates(ev.StepStarted(index=2, title="Add mul"))
    updates = shown.updates(ev.StepSkipped(step=2, reason="rejected 3 times"))
    (plan,) = [u for u in updates if isinstance(u, AgentPlanUpdate)]
    assert [(e.content, e.status) for e in plan.entries] == [
        ("1. Add sub", "completed"),
        ("2. Add mul (skipped: rejected 3 times)", "completed"),
    ]


def test_a_reply_streams_its_prose_without_the_edit_blocks(tmp_path) -> None:
    shown = Translator(tmp_path)
    shown.updates(ev.ModelCallStarted(purpose="propose", step=1))
    reply = (
        "Adding sub.\n\ncalc.py\n```python\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n"
        "Done.\n"
    )
    updates = [u for piece in reply.split(" ") for u in shown.updates(
        ev.TokenStream(purpose="propose", text=piece + " "))]  # fmt: skip
    updates += shown.updates(
        ev.ModelExchange(purpose="propose", step=1, messages=(), reply=reply,
                         finish_reason="stop", prompt_tokens=1, completion_tokens=1, usd=None)
    )  # fmt: skip
    said = "".join(u.content.text for u in updates if isinstance(u, AgentMessageChunk))
    assert "Adding sub." in said and "Done." in said
    assert "SEARCH" not in said and "calc.py" not in said


def test_files_the_tests_wrote_are_named_apart_from_the_steps_diff(tmp_path) -> None:
    """Not offered as the step's file diffs (never committed from an editor's review)."""
    (tmp_path / "calc.py").write_text("old\n")
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "calc.py").write_text("new\n")
    (shadow / "coverage.dat").write_text("1\n")
    shown = Translator(tmp_path, shadow=lambda: shadow)
    (call,) = shown.updates(
        ev.ProposalReady(
            step=1, title="Fix add", diff="…", tests_ok=True, summary="2 passed", attempts=0,
            changes=(("M", "calc.py"),), written_by_tests=(("A", "coverage.dat"),),
            written_diff="diff --git a/coverage.dat b/coverage.dat\n",
        )
    )  # fmt: skip
    modified, summary = call.content
    assert modified.path == str(tmp_path / "calc.py")
    text = summary.content.text
    assert "Written by the tests, not committed: coverage.dat (new)" in text
    assert call.raw_input["written_by_tests"] == ["coverage.dat"]
