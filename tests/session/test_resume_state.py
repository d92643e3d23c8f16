"""Reading a run record back (session/resume.py): what a resumed session, the TUI's replay and
an editor's `session/load` start from. Records are written by the real Recorder into a real
git repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.engine import events as ev
from tui_engineer.records.events_read import events_from_record
from tui_engineer.records.recorder import Recorder
from tui_engineer.session.resume import NothingToResume, load_run


def step(index: int, title: str) -> ev.StepInfo:
    return ev.StepInfo(index, title, f"do {title}", ("calc.py",), "pytest", ())


def record(repo: Path, session_id: str, *events: ev.Event) -> Path:
    recorder = Recorder(repo, session_id)
    for event in events:
        recorder(event)
    recorder.close()
    return recorder.path


def started(session_id: str = "20261124-100000-aaaa") -> ev.SessionStarted:
    return ev.SessionStarted(session_id, "add sub, mul and div", "m", "local", "pytest", head="c0")


def test_every_kind_of_event_reads_back_as_it_was_written(make_repo) -> None:
    repo = make_repo()
    written = [
        started(),
        ev.PlanReady(steps=(step(1, "Add sub"), step(2, "Add mul"))),
        ev.ModelExchange("plan", None, ({"role": "user", "content": "hi"},), "ok", "stop", 3, 4, 0),
        ev.TestsFinished(2, False, "1 failed", 1, 1, 0, 0, 0.5, ("t::a",), (("t::a", "tb"),)),
        ev.ProposalReady(2, "Add mul", "diff", True, "2 passed", 1, changes=(("M", "calc.py"),)),
        ev.DecisionMade(2, "reject", "not like that"),
        ev.FeedbackPending(texts=("use a loop",)),
        ev.SessionResumed("20261124-100000-aaaa", "c1", ("c1",), 2, "Resuming"),
    ]
    path = record(repo, "20261124-100000-aaaa", *written)
    assert events_from_record(path) == written


def test_a_record_of_a_stopped_session_gives_its_plan_steps_and_what_was_left(make_repo) -> None:
    repo = make_repo()
    sid = "20261124-100000-aaaa"
    plan = (step(1, "Add sub"), step(2, "Add mul"), step(3, "Add div"), step(4, "Docs"))
    record(
        repo, sid, started(sid),
        ev.PlanReady(steps=plan),
        ev.ModelExchange("plan", None, (), "plan", "stop", 100, 20, 0.01),
        ev.StepCommitted(1, "Add sub", "c1"),
        ev.DecisionMade(2, "skip", "not now"),
        ev.StepSkipped(2, "not now"),
        ev.DecisionMade(3, "reject", "use a loop"),
        ev.FeedbackDelivered("faster please", "propose", 3),
        ev.DecisionMade(3, "stop", "stopped by the human"),
        ev.StepSkipped(3, "stopped by the human"),
        ev.ModelExchange("propose", 3, (), "edits", "stop", 50, 10, 0.02),
        ev.FeedbackPending(texts=("faster please", "and add a docstring")),
        ev.SessionFinished("stopped", ("c1",), "stopped by the human"),
    )  # fmt: skip

    state = load_run(repo)

    assert state.session_id == sid and state.request == "add sub, mul and div"
    assert [(s.index, s.status, s.commit) for s in state.plan] == [
        (1, "accepted", "c1"), (2, "skipped", None), (3, "pending", None), (4, "pending", None),
    ]  # fmt: skip
    assert state.pending is not None and state.pending.index == 3  # stopped at: it goes on
    assert state.rejections == {3: ["use a loop"]}
    assert state.queued == ["and add a docstring"]  # the other one reached the model
    assert state.commits == ["c1"] and state.head == "c1"
    assert state.outcome == "stopped" and state.unfinished
    assert state.usage[:2] == (150, 30) and state.usage[2] == pytest.approx(0.03)
    assert isinstance(state.history[0], ev.SessionStarted) and len(state.history) == 13


def test_an_undone_step_is_worked_again_and_its_commit_no_longer_counts(make_repo) -> None:
    repo = make_repo()
    record(
        repo, "20261124-100000-aaaa", started(),
        ev.PlanReady(steps=(step(1, "Add sub"), step(2, "Add mul"))),
        ev.StepCommitted(1, "Add sub", "c1"),
        ev.StepCommitted(2, "Add mul", "c2"),
        ev.StepUndone(2, "undone"),
    )  # fmt: skip
    state = load_run(repo, "20261124-100000-aaaa")
    assert [s.status for s in state.plan] == ["accepted", "undone"]
    assert state.commits == ["c1"] and state.head == "c1"
    assert state.outcome == "crashed"  # no end recorded: kill -9


def test_the_newest_session_is_the_one_resumed_and_a_finished_one_says_so(make_repo) -> None:
    repo = make_repo()
    record(repo, "20261124-090000-aaaa", started("20261124-090000-aaaa"))
    record(
        repo, "20261124-100000-bbbb", started("20261124-100000-bbbb"),
        ev.SessionFinished("done", (), "1 step(s) committed"),
    )  # fmt: skip
    with pytest.raises(NothingToResume, match="finished .*nothing to resume") as said:
        load_run(repo)
    # It names the last one that can go on.
    assert "The last stopped one is 20261124-090000-aaaa: --resume 20261124-090000-aaaa" in str(
        said.value
    )
    assert load_run(repo, "20261124-090000-aaaa").outcome == "crashed"


def test_nothing_recorded_or_an_unknown_name_is_said_plainly(make_repo) -> None:
    repo = make_repo()
    with pytest.raises(NothingToResume, match="no recorded sessions yet"):
        load_run(repo)
    with pytest.raises(NothingToResume, match="No recorded session 'nope'.*tui-engineer runs"):
        load_run(repo, "nope")


def test_an_empty_newest_record_names_the_stopped_session_before_it(make_repo) -> None:
    """Session B killed a second after launch left an empty record: --resume named neither."""
    repo = make_repo()
    record(
        repo, "20261124-090000-aaaa", started("20261124-090000-aaaa"),
        ev.SessionFinished("stopped", (), "stopped after step 1"),
    )  # fmt: skip
    empty = record(repo, "20261124-100000-bbbb")
    empty.write_text("")
    with pytest.raises(NothingToResume, match="holds no session") as said:
        load_run(repo)
    assert "The last stopped one is 20261124-090000-aaaa: --resume 20261124-090000-aaaa" in str(
        said.value
    )
