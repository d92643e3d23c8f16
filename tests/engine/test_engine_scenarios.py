"""Engine scenarios from the loop issue: rejection, chat during a fix loop, stuck detection,
budgets, hostile edits, replay and JSON output — all through real HTTP, git and pytest."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, MUL_BUGGY, SUB, StepReviewer, edit, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import titles
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision

pytestmark = pytest.mark.usefixtures("api_key")


class ScriptedReviewer(StepReviewer):
    """Answers reviews from a list of decisions, recording what it was shown."""

    def __init__(self, *decisions: Decision) -> None:
        self.decisions = list(decisions)
        self.shown: list[str] = []

    async def review(self, proposal):
        self.shown.append(proposal.diff)
        return self.decisions.pop(0)


async def test_rejected_step_is_reproposed_with_the_reason(make_repo, scripted_server) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB), Reply(text=SUB.replace("a - b", "-(b - a)")))
    reviewer = ScriptedReviewer(Decision.reject("use plain a - b, not clever"), Decision.accept())
    result, _ = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False
    )
    second_prompt = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "use plain a - b, not clever" in second_prompt
    assert len(reviewer.shown) == 2
    assert result.exit_code == 0
    assert "-(b - a)" in (repo / "calc.py").read_text()
    assert titles(repo) == ["add sub", "initial"]


@whole_session
async def test_chat_message_during_fix_loop_reaches_the_next_fix_call(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    inbox: asyncio.Queue[str] = asyncio.Queue()

    def on_event(event: ev.Event) -> None:
        if isinstance(event, ev.TestsFinished) and not event.ok:
            inbox.put_nowait("hint from the human: multiply, do not add")

    scripted_server.script(
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds."),
        Reply(text=edit("calc.py", "    return a + b  # x\n", "    return a * b\n")),
    )
    result, seen = await run_headless(
        repo, "add mul", scripted_server.base_url, sink=on_event, inbox=inbox, plan=False
    )
    propose, diagnose, fix = scripted_server.chat_requests
    assert "hint from the human" in fix.messages[-1]["content"]
    assert all("hint from the human" not in m["content"] for m in diagnose.messages)
    delivered = seen.of(ev.FeedbackDelivered)
    assert [d.purpose for d in delivered] == ["fix"]
    assert result.exit_code == 0


@whole_session
async def test_repeating_the_same_failure_stops_before_max_attempts(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds."),
        # A "fix" that changes a comment only: the same test fails the same way.
        Reply(text=edit("calc.py", "    return a + b  # x\n", "    return a + b  # y\n")),
    )
    result, seen = await run_headless(
        repo, "add mul", scripted_server.base_url, plan=False, max_fix_attempts=5
    )
    assert len(scripted_server.chat_requests) == 3  # propose, diagnose, one fix: then stuck
    assert [s.reason for s in seen.of(ev.Stuck)] == [
        "stuck: the same tests failed the same way twice in a row"
    ]
    (proposal,) = seen.of(ev.ProposalReady)
    assert any(note.startswith("suggestion: reject with a reason") for note in proposal.notes)
    assert result.exit_code == 1
    assert titles(repo) == ["initial"]
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_token_budget_stops_mid_session_without_partial_changes(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    mul_ok = MUL_BUGGY.replace("a + b  # x", "a * b")
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul"), usage=(100, 50)),
        Reply(text=SUB, usage=(4000, 500)),
        Reply(text=mul_ok),  # never requested: the budget is spent first
    )
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, max_tokens=5000
    )
    assert len(scripted_server.chat_requests) == 2
    assert result.outcome == "budget" and result.exit_code == 1
    assert "token" in result.message.lower()
    assert len(seen.of(ev.BudgetWarning)) == 1  # warned once at 80%, before the stop
    assert titles(repo) == ["Add sub", "initial"]
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_hostile_edit_is_fed_back_and_nothing_is_written_outside(
    make_repo, scripted_server, tmp_path
) -> None:
    repo = make_repo()
    outside = tmp_path / "outside.py"
    scripted_server.script(
        Reply(text=edit("../outside.py", "", "print('pwned')\n")),
        Reply(text=SUB),
    )
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert not outside.exists()
    refusal = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "../outside.py" in refusal
    assert len(seen.of(ev.EditRefused)) == 1
    assert result.exit_code == 0
    assert titles(repo) == ["add sub", "initial"]


@whole_session
async def test_replayed_record_reproduces_the_same_commits(
    make_repo, scripted_server, tmp_path
) -> None:
    repo = make_repo()
    pristine = tmp_path / "pristine"
    shutil.copytree(repo, pristine)
    scripted_server.script(
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds."),
        Reply(text=edit("calc.py", "    return a + b  # x\n", "    return a * b\n")),
    )
    first, _ = await run_headless(repo, "add mul", scripted_server.base_url, plan=False)
    assert first.exit_code == 0
    records = list((repo / ".tui-engineer" / "runs").glob("*.jsonl"))
    assert len(records) == 1
    assert KEY not in records[0].read_text()
    assert git(repo, "status", "--porcelain") == ""  # records are excluded from git

    replayed, _ = await run_headless(
        pristine, "add mul", "http://127.0.0.1:9/v1", plan=False, replay=records[0]
    )
    assert replayed.exit_code == 0
    assert titles(pristine) == titles(repo)
    assert git(pristine, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "HEAD^{tree}")


@whole_session
def test_json_output_is_one_event_per_line(make_repo, scripted_server: ScriptedServer) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_engineer",
            "run",
            "add sub",
            "--yes",
            "--json",
            "--no-plan",
            "--base-url",
            scripted_server.base_url,
            "--model",
            "test-model",
            "-C",
            str(repo),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert "step_started" in kinds and "step_committed" in kinds
    committed = next(e for e in events if e["type"] == "step_committed")
    assert committed["sha"] == git(repo, "rev-parse", "HEAD")


def test_run_outside_a_repo_exits_2_with_a_clear_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "x", "--yes", "-C", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "not inside a git repository" in done.stderr
    assert "Traceback" not in done.stderr


def test_run_refuses_a_dirty_tree_without_allow_dirty(make_repo) -> None:
    repo = make_repo()
    (repo / "calc.py").write_text("# my unsaved work\n")
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "x", "--yes", "-C", str(repo)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )
    assert done.returncode == 2
    assert "--allow-dirty" in done.stderr and "calc.py" in done.stderr
    assert (repo / "calc.py").read_text() == "# my unsaved work\n"


@whole_session
async def test_undo_during_a_session_takes_back_the_last_step(make_repo, scripted_server) -> None:
    from tui_engineer.session.prepare import prepare
    from tui_engineer.session.run import RunOptions, run_prepared

    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    holder: dict[str, object] = {}
    undo_messages: list[str] = []

    class UndoingReviewer(ScriptedReviewer):
        async def still_wrong(self):
            undo_messages.append(await holder["session"].undo_last())
            return None

    options = RunOptions(
        request="add sub",
        repo=repo,
        flags={"base_url": scripted_server.base_url, "model": "test-model"},
        plan=False,
    )
    seen: list[ev.Event] = []
    result = await run_prepared(
        prepare(options),
        UndoingReviewer(Decision.accept()),
        seen.append,
        on_session=lambda s: holder.update(session=s),
    )
    assert titles(repo) == ["initial"]
    assert "sub" not in (repo / "calc.py").read_text()
    assert undo_messages and any(isinstance(e, ev.StepUndone) for e in seen)
    assert result.commits == []
    assert result.exit_code == 1  # the session's only step was taken back


def test_missing_test_program_is_refused_before_any_model_call(make_repo, scripted_server) -> None:
    repo = make_repo()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui_engineer",
            "run",
            "x",
            "--yes",
            "-C",
            str(repo),
            "--test-cmd",
            "no-such-test-runner --fast",
            "--base-url",
            scripted_server.base_url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )
    assert done.returncode == 2
    assert "`no-such-test-runner` was not found" in done.stderr
    assert scripted_server.requests == []


@whole_session
async def test_edited_plan_replaces_the_step_and_the_session_still_succeeds(
    make_repo, scripted_server
) -> None:
    from tui_engineer.engine.plans.plan import Step

    repo = make_repo()
    scripted_server.script(Reply(text=SUB), Reply(text=SUB))
    new_plan = [Step(index=0, title="Add sub, plainly", description="a - b")]
    reviewer = ScriptedReviewer(
        Decision("edit_plan", "plan edited", new_steps=new_plan), Decision.accept()
    )
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False
    )
    assert titles(repo) == ["Add sub, plainly", "initial"]
    assert [s.title for s in seen.of(ev.PlanReady)[-1].steps] == ["add sub", "Add sub, plainly"]
    assert result.exit_code == 0
