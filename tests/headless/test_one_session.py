"""One repository, one live session (issue 37 §2): a second `tui-engineer` on a repository whose
session runs in another process (a terminal, a `serve` tab) is told at its start, naming that
session; it never runs beside it to be refused later with a message that blames the user."""

from __future__ import annotations

import pytest

from tests.engine_support import MUL_ON_SUB, SUB
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.timing_support import RunProcess, hold_step_1, plan_calls, run_answering, titles

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
def test_a_second_run_on_the_repository_is_told_at_its_start(make_repo, scripted_server) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    first = RunProcess(repo, scripted_server, "add sub and mul")
    try:
        gate.reached.wait(30)  # the first session is at work (its step 1 call held)
        second = RunProcess(repo, scripted_server, "add div")
        code, err = second.finish()
        assert code == 2, err
        assert "Another tui-engineer session is working on this repository" in err
        assert f"process {first.proc.pid}" in err
        assert len(scripted_server.chat_requests) == 2  # the first's plan and step 1: no more
    finally:
        gate.open()
        first.kill()
    assert titles(repo) == ["initial"]


@whole_session
def test_a_second_terminal_takes_the_session_over_and_goes_on_with_it(
    make_repo, scripted_server
) -> None:
    """Answering `t` in the second terminal: the first process stops cleanly (SIGTERM, nothing
    committed half way), and its session goes on here from its record, its plan not asked
    again: step 1 reviewed and accepted here, step 2 reviewed, then a stop."""
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    scripted_server.script(Reply(text=SUB), Reply(text=MUL_ON_SUB))  # asked again here
    first = RunProcess(repo, scripted_server, "add sub and mul")
    try:
        gate.reached.wait(30)
        second = run_answering(repo, scripted_server, "add div", "t\na\n", timeout=120)
        code, err = first.finish()
        assert code == 1 and "stopped by SIGTERM" in err, err
    finally:
        gate.open()
        first.kill()
    assert "Another tui-engineer session is working on this repository" in second.stderr
    assert "Took over session" in second.stderr, second.stderr
    assert "Step 2: Add mul" in second.stdout + second.stderr
    assert titles(repo) == ["Add sub", "initial"]
    assert plan_calls(scripted_server) == 1  # the first process's: none after the take over
