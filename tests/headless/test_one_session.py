"""One repository, one live session (issue 37 §2): a second `tui-engineer` on a repository whose
session runs in another process (a terminal, a `serve` tab) is told at its start, naming that
session; it never runs beside it to be refused later with a message that blames the user."""

from __future__ import annotations

import pytest

from tests.timing_support import RunProcess, hold_step_1, titles

pytestmark = pytest.mark.usefixtures("api_key")


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
