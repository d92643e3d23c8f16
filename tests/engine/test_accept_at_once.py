"""A decision is final at once, whatever the model is doing (DESIGN.md invariant 8): real
headless sessions, real git repos and pytest runs, the scripted model over HTTP holding step 2's
reply until the test releases it (a model that takes as long as the test wants: no clocks)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine.test_engine_pipeline import by_conversation
from tests.engine_support import MUL_ON_SUB, SUB, StepReviewer, plan_reply, run_headless
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import (
    REACHED,
    RunProcess,
    accepted_into_a_slow_hook,
    hold_step_2,
    session_in_a_slow_hook,
    titles,
)
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.records.recorder import read_record

pytestmark = pytest.mark.usefixtures("api_key")


class AcceptWhenHeld(StepReviewer):
    """Accepts step 1 once step 2's model call is in flight (held by `gate`), like a human who
    reads step 1 while a slow model writes step 2; later steps at once."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.reviews = 0

    async def review(self, proposal):
        self.reviews += 1
        if self.reviews == 1:
            await self.gate.arrived()
        return Decision.accept()


class Watch:
    """An event sink that notes when step 1 was decided and committed, and what the branch
    held then; opens the gate once step 2's turn comes, after step 1's commit (or, if that
    never comes, at the end of the test's patience, so a failing test fails instead of
    hanging)."""

    def __init__(self, repo: Path, gate: Gate) -> None:
        self.repo, self.gate = repo, gate
        self.decided_at: float | None = None
        self.committed_at: float | None = None
        self.committed_while_held: bool | None = None
        self.branch_then: list[str] = []
        self.turn = asyncio.Event()  # step 2's

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.DecisionMade) and event.step == 1:
            self.decided_at = time.monotonic()
        if isinstance(event, ev.StepCommitted) and event.step == 1:
            self.committed_at = time.monotonic()
            self.committed_while_held = not self.gate._open.is_set()
            self.branch_then = git(self.repo, "log", "--format=%s").splitlines()
        if isinstance(event, ev.StepStarted) and event.index == 2:
            self.turn.set()

    async def open_at_step_2s_turn(self) -> None:
        try:
            await asyncio.wait_for(self.turn.wait(), REACHED)
        finally:
            self.gate.open()

    @property
    def latency(self) -> float:
        assert self.decided_at is not None and self.committed_at is not None
        return self.committed_at - self.decided_at


@whole_session
async def test_accept_commits_while_the_next_steps_model_call_is_still_held(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    gate = hold_step_2(scripted_server)  # step 2, prepared during step 1's review
    watch = Watch(repo, gate)
    opener = asyncio.ensure_future(watch.open_at_step_2s_turn())
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=AcceptWhenHeld(gate),
        sink=watch, pipeline=True,
    )  # fmt: skip
    await opener

    assert result.exit_code == 0, result.message
    # Step 1 was on the branch before step 2's model call answered.
    assert watch.committed_while_held is True
    assert watch.branch_then == ["Add sub", "initial"]
    print(f"accept -> commit with step 2's call held: {watch.latency * 1000:.0f} ms")
    # Step 2 was still prepared ahead, and committed on top of step 1.
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [(2, True)]
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
    # Its call ended after its turn came: shown as the step's own. The token counts shown
    # never go backwards, and the last ones count every call.
    assert [e.background for e in seen.of(ev.ModelExchange)] == [False, False, False]
    shown = [e.prompt_tokens + e.completion_tokens for e in seen.of(ev.UsageUpdated)]
    assert shown == sorted(shown)
    exchanged = sum(e.prompt_tokens + e.completion_tokens for e in seen.of(ev.ModelExchange))
    assert shown[-1] == exchanged


class ReadsUntil(StepReviewer):
    """Reads step 1 until an event `seen(event)` came (a human reading while the model works in
    the background); then accepts every step."""

    def __init__(self, seen: Callable[[ev.Event], bool]) -> None:
        self.seen, self.came, self.reviews = seen, asyncio.Event(), 0

    def sink(self, event: ev.Event) -> None:
        if self.seen(event):
            self.came.set()

    async def review(self, proposal):
        self.reviews += 1
        if self.reviews == 1:
            await asyncio.wait_for(self.came.wait(), REACHED)
        return Decision.accept()


async def read_until(repo, server: ScriptedServer, reviewer: ReadsUntil):
    """The session "add sub and mul", the next step prepared during review, `reviewer` reading
    step 1 until its event came; it must end well."""
    result, seen = await run_headless(
        repo, "add sub and mul", server.base_url, reviewer=reviewer, sink=reviewer.sink,
        pipeline=True,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    return seen


def noticed_preparation(event: ev.Event) -> bool:
    return isinstance(event, ev.Notice) and "prepared ahead" in event.message


def prepared(event: ev.Event) -> bool:
    return isinstance(event, ev.NextStepPrepared) and event.ready


@whole_session
async def test_a_failed_preparation_is_noted_once_and_the_step_proposed_in_its_turn(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(status=400),  # step 2's preparation fails (a refused request) during the review
        Reply(text=MUL_ON_SUB),  # proposed again when its turn comes
    )
    reviewer = ReadsUntil(noticed_preparation)
    seen = await read_until(repo, scripted_server, reviewer)

    notes = [e.message for e in seen.of(ev.Notice) if "prepared ahead" in e.message]
    assert len(notes) == 1 and notes[0].startswith("Step 2 could not be prepared ahead")
    # Quietly: no error, no failed call shown as the session's.
    assert seen.of(ev.ErrorEvent) == [] and seen.of(ev.ModelCallFailed) == []
    assert titles(repo) == ["Add mul", "Add sub", "initial"]


class QuitAfterAccept(AcceptWhenHeld):
    """Accepts step 1 while step 2 is held, and the session is stopped (Ctrl-C, SIGTERM: the
    session task is cancelled) right after the decision."""

    session: asyncio.Task | None = None

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.DecisionMade) and event.step == 1:
            assert self.session is not None
            self.session.cancel()


@whole_session
async def test_a_stop_right_after_an_accept_leaves_the_step_committed_and_says_so(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    reviewer = QuitAfterAccept(gate)
    seen: list[ev.Event] = []

    def sink(event: ev.Event) -> None:
        seen.append(event)
        reviewer.sink(event)

    session = asyncio.ensure_future(
        run_headless(
            repo,
            "add sub and mul",
            scripted_server.base_url,
            reviewer=reviewer,
            sink=sink,
            pipeline=True,
        )  # fmt: skip
    )
    reviewer.session = session
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(session), REACHED)
    finally:
        gate.open()
    assert titles(repo) == ["Add sub", "initial"]
    sha = git(repo, "rev-parse", "HEAD")
    [finished] = [e for e in seen if isinstance(e, ev.SessionFinished)]
    assert finished.outcome == "quit" and finished.commits == (sha,)
    assert [e.sha for e in seen if isinstance(e, ev.StepCommitted)] == [sha]
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    assert [e["sha"] for e in read_record(record) if e["type"] == "step_committed"] == [sha]
    assert "def sub" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""


class AnsweredThenStopped(StepReviewer):
    """A UI's reviewer: the human's key press resolves the question's future; a quit (Ctrl-C)
    comes in the same instant, before the session has taken the answer."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.answer: asyncio.Future | None = None

    async def review(self, proposal):
        self.answer = asyncio.get_running_loop().create_future()
        self.asked.set()
        return await self.answer


@whole_session
async def test_an_accept_answered_in_the_same_instant_as_a_quit_is_still_committed(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    reviewer = AnsweredThenStopped()
    session = asyncio.ensure_future(
        run_headless(repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False)
    )
    await asyncio.wait_for(reviewer.asked.wait(), REACHED)
    assert reviewer.answer is not None
    reviewer.answer.set_result(Decision.accept())  # 'a'
    session.cancel()  # Ctrl-C, before the engine ran again
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(session), REACHED)
    assert titles(repo) == ["add sub", "initial"]
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_a_stop_during_a_slow_pre_commit_hook_waits_for_the_commit_and_reports_it(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    async with session_in_a_slow_hook(repo, scripted_server) as (session, seen, release):
        session.cancel()  # Ctrl-C / SIGTERM while the hook runs
        await asyncio.sleep(0)
        assert not session.done()  # it waits for the commit, whose hook still runs
        release.touch()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(session), REACHED)
    head = git(repo, "rev-parse", "HEAD")
    # It said why the stop waited; what it reported is what the branch holds.
    waited = [e.message for e in seen if isinstance(e, ev.Notice) and "Stopping once" in e.message]
    assert waited == [
        "Stopping once step 1's commit is made (your hooks are running); the accept is not lost."
    ]
    [finished] = [e for e in seen if isinstance(e, ev.SessionFinished)]
    assert finished.outcome == "quit" and finished.commits == (head,)
    assert titles(repo) == ["add sub", "initial"]
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "tui-engineer-accept.json").exists()


@whole_session
async def test_a_session_whose_first_step_needs_one_fix_makes_five_model_calls(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(*[by_conversation] * 12)
    reviewer = ReadsUntil(prepared)
    seen = await read_until(repo, scripted_server, reviewer)

    purposes = [(e.purpose, e.step) for e in seen.of(ev.ModelExchange)]
    # plan; step 1: propose, diagnose, fix; step 2: propose (prepared ahead, once step 1 passed)
    assert purposes == [
        ("plan", None), ("propose", 1), ("diagnose", 1), ("fix", 1), ("propose", 2)
    ], purposes  # fmt: skip
    assert len(scripted_server.chat_requests) == 5
    # Step 2 was never built on step 1's failing try.
    step2 = [r for r in scripted_server.chat_requests if "Now do step 2" in str(r.messages[1:2])]
    assert len(step2) == 1 and "a + b  # x" not in str(step2[0].messages)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]


# ----- a real `tui-engineer run` process (timing_support.RunProcess), stopped by signals


def the_commit_is_reported(repo: Path, run: RunProcess, err: str, title: str) -> None:
    """What the run said (JSON, the record, its last line) is what the branch holds."""
    head = git(repo, "rev-parse", "HEAD")
    assert titles(repo) == [title, "initial"]
    assert [e["sha"] for e in run.events if e["type"] == "step_committed"] == [head]
    [finished] = [e for e in run.events if e["type"] == "session_finished"]
    assert finished["outcome"] == "quit" and finished["commits"] == [head]
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    assert [e["sha"] for e in read_record(record) if e["type"] == "step_committed"] == [head]
    last = err.strip().splitlines()[-1]
    assert head[:8] in last and title in last and "untouched" in last, err
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / "tui-engineer-accept.json").exists()


@whole_session
@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_during_a_slow_pre_commit_hook_waits_for_the_commit_and_names_it(
    name: str, make_repo, scripted_server: ScriptedServer
) -> None:
    import signal

    repo = make_repo()
    run, release = accepted_into_a_slow_hook(repo, scripted_server)
    try:
        run.proc.send_signal(getattr(signal, name))
        time.sleep(0.2)  # not a wait for a result: it shows the run did not report early
        assert run.proc.poll() is None, "it reported before the branch stopped moving"
        release.touch()
        code, err = run.finish()
    finally:
        release.touch()
        run.kill()
    assert code == (130 if name == "SIGINT" else 1)
    the_commit_is_reported(repo, run, err, "add sub")


def test_a_signal_right_after_an_accept_commits_whatever_the_model_is_doing(
    make_repo, scripted_server: ScriptedServer
) -> None:
    import signal

    repo = make_repo()
    gate = hold_step_2(scripted_server)
    run = RunProcess(repo, scripted_server, "add sub and mul")
    try:
        run.wait_event("decision", step=1, decision="accept")
        run.proc.send_signal(signal.SIGINT)  # Ctrl-C, step 2's call still held
        code, err = run.finish()
    finally:
        gate.open()
        run.kill()
    assert code == 130
    the_commit_is_reported(repo, run, err, "Add sub")


@whole_session
def test_kill_9_after_the_decision_during_the_commit_is_finished_at_the_next_start(
    make_repo, scripted_server: ScriptedServer
) -> None:
    from tui_engineer.session.options import RunOptions
    from tui_engineer.session.prepare import prepare

    repo = make_repo()
    run, release = accepted_into_a_slow_hook(repo, scripted_server)
    try:
        run.kill()  # kill -9 of its whole process group, the hook too
    finally:
        release.touch()
    assert titles(repo) == ["initial"]
    # The next start (TUI or headless: the same start-up) makes the decided commit.
    options = RunOptions(request="next", repo=repo, flags={"base_url": scripted_server.base_url})
    prepared = prepare(options, model=False)
    assert titles(repo) == ["add sub", "initial"]
    assert any("committed now" in n for n in prepared.notices), prepared.notices
    assert "def sub" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_once_its_turn_comes_the_prepared_step_is_shown_as_it_goes(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Step 1 accepted while step 2's call is still held: from then on step 2 is the step in
    hand, so its call shows (spinner, streamed reply) while it is still in flight, not in one
    burst afterwards."""
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    committed, shown = asyncio.Event(), asyncio.Event()
    held_then: list[bool] = []

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.StepCommitted) and event.step == 1:
            committed.set()
        if isinstance(event, ev.ModelCallStarted) and event.step == 2 and committed.is_set():
            held_then.append(not gate._open.is_set())
            shown.set()

    async def opener() -> None:
        try:
            await asyncio.wait_for(committed.wait(), REACHED)
            await asyncio.wait_for(shown.wait(), REACHED)
        finally:
            gate.open()

    opening = asyncio.ensure_future(opener())
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=AcceptWhenHeld(gate),
        sink=sink, pipeline=True,
    )  # fmt: skip
    await opening  # a TimeoutError here: step 2 was not shown while in flight
    assert result.exit_code == 0, result.message
    assert held_then == [True]
    # Shown once, as the step's own events: no call of step 2 repeated, none left out.
    starts = [e for e in seen.of(ev.ModelCallStarted) if e.step == 2]
    assert len(starts) == 1
    assert [e.background for e in seen.of(ev.ModelExchange) if e.step == 2] == [False]
