"""`tui-engineer run --resume`: a stopped session goes on from its run record, with its plan
and accepted steps and no new plan call. Real `tui-engineer run` processes stopped by a real
SIGINT or SIGKILL while the scripted model (real HTTP, the real openai client) holds step 2's
reply; real git repos and pytest runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, MUL_ON_SUB, SUB, Collector, StepReviewer, plan_reply
from tests.scripted_server import Gate, RecordedRequest, Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import RunProcess, hold_step_2, run_answering, run_to_the_end
from tui_engineer.engine import events as ev
from tui_engineer.engine.prompts import PLAN_FORMAT
from tui_engineer.engine.reviews.approval import AutoReviewer
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.records.recorder import read_record
from tui_engineer.session.options import RunOptions
from tui_engineer.session.run import run_session


def is_plan_call(request: RecordedRequest) -> bool:
    return any(PLAN_FORMAT[:40] in str(m.get("content")) for m in request.messages)


def stopped_during_step_2(repo: Path, server: ScriptedServer, how: str) -> RunProcess:
    """A two-step session with step 1 committed, stopped (`how`: a signal's name) while the
    model is still writing step 2."""
    gate = hold_step_2(server)  # step 2: the model "thinks" until the test is done
    run = RunProcess(repo, server, "add sub and mul")
    try:
        run.wait_event("step_committed", step=1)
        assert gate.reached.wait(30), "step 2's model call never came"
        if how == "SIGKILL":
            run.kill()
        else:  # SIGINT: Ctrl-C; SIGHUP: the terminal closed
            run.proc.send_signal(getattr(signal, how))
            code, _ = run.finish()
            assert code == (130 if how == "SIGINT" else 1)
    finally:
        run.kill()
    assert git(repo, "log", "-1", "--format=%s") == "Add sub"  # step 2 not committed
    return run


def resume(repo: Path, server: ScriptedServer, *args: str) -> tuple[int, str, RunProcess]:
    return run_to_the_end(repo, server, None, "--resume", *args)


def finished_add_sub(repo: Path, server: ScriptedServer) -> None:
    """`tui-engineer run "add sub" --no-plan` run to its end: a finished session on record."""
    server.script(Reply(text=SUB))
    assert RunProcess(repo, server, "add sub", "--no-plan").finish()[0] == 0


def commit_users_notes(repo: Path, text: str) -> None:
    """The user's own work meanwhile, committed: NOTES.md (no file of any step) holding `text`."""
    (repo / "NOTES.md").write_text(text)
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "-q", "-m", "User's notes")


def in_process(server: ScriptedServer) -> dict[str, object]:
    """The flags of a session run in this process: the scripted model, and no step prepared
    during review (the replies are served in the order the calls come)."""
    return {"base_url": server.base_url, "model": "test-model", "pipeline": False}


@whole_session
@pytest.mark.parametrize("how", ["SIGINT", "SIGHUP", "SIGKILL"])
def test_a_session_stopped_while_step_2_waits_for_the_model_resumes_without_a_plan_call(
    how: str, make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    first = stopped_during_step_2(repo, scripted_server, how)
    session_id = first.events[0]["session_id"]
    asked_before = len(scripted_server.chat_requests)

    scripted_server.script(Reply(text=MUL_ON_SUB))
    code, err, run = resume(repo, scripted_server)

    assert code == 0, err
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    # One model call: step 2's proposal, made knowing step 1 is in. No plan call.
    [again] = scripted_server.chat_requests[asked_before:]
    assert not is_plan_call(again)
    prompt = "\n".join(str(m["content"]) for m in again.messages)
    assert "[accepted] Add sub" in prompt and "Add mul" in prompt
    # The same session, told as resumed, in the same record.
    [resumed] = [e for e in run.events if e["type"] == "session_resumed"]
    assert resumed["session_id"] == session_id and resumed["next_step"] == 2
    assert resumed["committed"] == [git(repo, "rev-parse", "HEAD~1")]
    assert [e["step"] for e in run.events if e["type"] == "step_committed"] == [2]
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    assert record.stem == session_id
    kinds = [e["type"] for e in read_record(record)]
    assert kinds.count("session_resumed") == 1 and kinds[-1] == "session_finished"
    assert git(repo, "status", "--porcelain") == ""


@whole_session
def test_a_repository_that_moved_on_resumes_on_the_new_head_and_says_so(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    stopped_during_step_2(repo, scripted_server, "SIGINT")
    commit_users_notes(repo, "the user's own work meanwhile\n")

    scripted_server.script(Reply(text=MUL_ON_SUB))
    code, err, run = resume(repo, scripted_server)

    assert code == 0, err
    log = git(repo, "log", "--format=%s").splitlines()
    assert log == ["Add mul", "User's notes", "Add sub", "initial"]
    [resumed] = [e for e in run.events if e["type"] == "session_resumed"]
    assert "moved on" in resumed["message"] and "User's notes" in resumed["message"]
    assert resumed["head"] == git(repo, "rev-parse", "HEAD~1")


@whole_session
def test_a_finished_session_says_it_has_nothing_to_resume(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    finished_add_sub(repo, scripted_server)
    asked = len(scripted_server.chat_requests)

    code, err, _ = resume(repo, scripted_server)

    assert code == 2
    assert "finished" in err and "nothing to resume" in err, err
    assert "Traceback" not in err
    assert len(scripted_server.chat_requests) == asked


def test_resume_names_a_session_it_does_not_know(make_repo, scripted_server) -> None:
    repo = make_repo()
    code, err, _ = resume(repo, scripted_server, "20990101-000000-dead")
    assert code == 2 and "No recorded session" in err and "tui-engineer runs" in err, err


@whole_session
def test_runs_marks_which_sessions_can_be_resumed(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    finished_add_sub(repo, scripted_server)
    stopped = stopped_during_step_2(repo, scripted_server, "SIGKILL")

    listing = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "runs"], cwd=repo, capture_output=True,
        text=True, check=True, env={**os.environ, "OPENAI_API_KEY": KEY},
    ).stdout  # fmt: skip

    header, *lines = listing.splitlines()
    assert "resumable" in header
    rows = {line.split()[0]: line for line in lines if line.strip()}
    killed = stopped.events[0]["session_id"]
    assert " yes " in rows[killed] and "crashed" in rows[killed]
    [finished] = [
        row for sid, row in rows.items() if sid.isascii() and sid != killed and sid[:8].isdigit()
    ]
    assert " no " in finished and " yes " not in finished
    assert "--resume" in listing  # says how


@whole_session
@pytest.mark.usefixtures("api_key")
async def test_a_session_a_budget_stopped_resumes_with_a_larger_budget_counting_the_spent(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul"), usage=(1, 1)),
        Reply(text=SUB, usage=(4900, 0)),  # step 1 leaves too little for step 2
    )
    flags = in_process(scripted_server)

    options = RunOptions("add sub and mul", repo, {**flags, "max_tokens": 5000})
    first = await run_session(options, AutoReviewer(), Collector())
    assert first.outcome == "budget" and "Token budget" in first.message
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]

    scripted_server.script(Reply(text=MUL_ON_SUB, usage=(10, 10)))
    seen = Collector()
    again = await run_session(
        RunOptions("", repo, {**flags, "max_tokens": 20_000}, resume=""), AutoReviewer(), seen
    )
    assert again.exit_code == 0, again.message
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert len(scripted_server.chat_requests) == 3  # plan, step 1, step 2: no second plan
    # The budget counts what the session spent before it was resumed.
    assert seen.of(ev.UsageUpdated)[-1].prompt_tokens == 1 + 4900 + 10
    [resumed] = seen.of(ev.SessionResumed)
    assert "last run ended: budget" in resumed.message


class StopsAtStep2Review(StepReviewer):
    """Accepts step 1; at step 2's review the session is stopped (a Ctrl-C while the human
    reads it): `reading` is set and the review never answers."""

    def __init__(self) -> None:
        self.reading = asyncio.Event()

    async def review(self, proposal):
        if proposal.step.index == 1:
            return Decision.accept()
        self.reading.set()
        await asyncio.Event().wait()


async def stopped_in_step_2s_review(repo: Path, server: ScriptedServer) -> None:
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=MUL_ON_SUB)
    )
    reviewer = StopsAtStep2Review()
    options = RunOptions("add sub and mul", repo, in_process(server))
    session = asyncio.ensure_future(run_session(options, reviewer, Collector()))
    await asyncio.wait_for(reviewer.reading.wait(), 60)
    session.cancel()  # what Ctrl-C does to `tui-engineer run`'s session
    with pytest.raises(asyncio.CancelledError):
        await session
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]


async def resume_in_process(repo: Path, server: ScriptedServer) -> tuple[object, Collector]:
    seen = Collector()
    options = RunOptions("", repo, in_process(server), resume="")
    result = await run_session(options, AutoReviewer(), seen)
    return result, seen


@pytest.mark.usefixtures("api_key")
async def test_a_proposal_under_review_when_stopped_is_shown_again_without_a_model_call(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    await stopped_in_step_2s_review(repo, scripted_server)
    commit_users_notes(repo, "not a file of step 2\n")
    asked = len(scripted_server.chat_requests)

    result, seen = await resume_in_process(repo, scripted_server)

    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == asked  # the same diff, tested again
    [proposal] = seen.of(ev.ProposalReady)
    assert proposal.step == 2 and "def mul" in proposal.diff and proposal.tests_ok
    assert any("shown again" in note for note in proposal.notes)
    assert [e.scope for e in seen.of(ev.TestsFinished) if e.step == 2] == ["full"]
    log = git(repo, "log", "--format=%s").splitlines()
    assert log == ["Add mul", "User's notes", "Add sub", "initial"]


@whole_session
@pytest.mark.usefixtures("api_key")
async def test_a_proposal_whose_files_changed_meanwhile_is_proposed_again_not_applied_blind(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    await stopped_in_step_2s_review(repo, scripted_server)
    calc = repo / "calc.py"
    calc.write_text(calc.read_text() + "\n\n# the user's note on calc.py\n")
    git(repo, "commit", "-q", "-am", "User's calc note")
    asked = len(scripted_server.chat_requests)
    scripted_server.script(Reply(text=MUL_ON_SUB))

    result, seen = await resume_in_process(repo, scripted_server)

    assert result.exit_code == 0, result.message
    [again] = scripted_server.chat_requests[asked:]  # step 2 proposed again, not planned
    assert not is_plan_call(again)
    assert "the user's note on calc.py" in "\n".join(str(m["content"]) for m in again.messages)
    [resumed] = seen.of(ev.SessionResumed)
    assert "Step 2's files changed" in resumed.message and "calc.py" in resumed.message
    [proposal] = seen.of(ev.ProposalReady)
    assert not any("shown again" in note for note in proposal.notes)
    assert "# the user's note on calc.py" in calc.read_text() and "def mul" in calc.read_text()


@whole_session
def test_a_session_still_running_elsewhere_is_not_resumed_twice(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    gate = Gate()
    scripted_server.script(Reply(text=plan_reply("Add sub"), hold=gate))
    running = RunProcess(repo, scripted_server, "add sub")
    try:
        assert gate.reached.wait(30), "the plan call never came"
        session_id = running.wait_event("session_started")["session_id"]
        code, err, _ = resume(repo, scripted_server)
    finally:
        gate.open()
        running.kill()
    assert code == 2, err
    assert f"Session {session_id} is still running (process {running.proc.pid}" in err
    assert len(scripted_server.chat_requests) == 1  # the running one's plan call only


def replay(repo: Path, record: Path) -> subprocess.CompletedProcess[str]:
    """`tui-engineer run --replay RECORD --yes`: the recorded replies, no model server."""
    command = [sys.executable, "-m", "tui_engineer", "run", "--replay", str(record), "--yes"]
    return subprocess.run(
        command, cwd=repo, capture_output=True, text=True, timeout=180,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )  # fmt: skip


def stopped_at_step_2s_review(repo: Path, server: ScriptedServer) -> None:
    """Step 1 accepted, then 'stop' answered at step 2's review (prepared during step 1's):
    resumed, step 2 is shown again with no model call."""
    server.script(Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB))
    server.script(Reply(text=MUL_ON_SUB))
    done = run_answering(repo, server, "add sub and mul", "a\nt\n")
    assert done.returncode == 1, done.stdout + done.stderr


# SIGINT in the slow tier (76 s at load 10-16): SIGKILL ends the record harder, and the resume
# after each signal is quick above (test_a_session_stopped_while_step_2_waits_...).
@whole_session
@pytest.mark.parametrize(
    "how", [pytest.param("SIGINT", marks=pytest.mark.slow), "SIGKILL", "at review"]
)
def test_a_resumed_sessions_record_replays_to_the_same_commits(
    how: str, make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    pristine = tmp_path / "pristine"
    shutil.copytree(repo, pristine)  # the same starting commit, no record
    if how == "at review":
        stopped_at_step_2s_review(repo, scripted_server)
    else:
        stopped_during_step_2(repo, scripted_server, how)
        scripted_server.script(Reply(text=MUL_ON_SUB))
    code, err, _ = resume(repo, scripted_server)
    assert code == 0, err
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    asked = len(scripted_server.chat_requests)

    done = replay(pristine, record)

    assert done.returncode == 0, done.stdout + done.stderr
    log = git(pristine, "log", "--format=%s").splitlines()
    assert log == git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert git(pristine, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "HEAD^{tree}")
    assert len(scripted_server.chat_requests) == asked  # no model server was asked
