"""An announced accept is kept (DESIGN.md invariant 8): a real `tui-engineer run --yes --json`
is SIGKILLed the moment its `decision` line is read, before anything else can happen. Whatever
instant that is, the step is committed already or its journal is on disk, and the next start
commits it, says so, and never asks the model for that step again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, write_hook
from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import (
    RunProcess,
    accepted_into_a_slow_hook,
    run_to_the_end,
    titles,
)

JOURNAL = "tui-engineer-accept.json"
# The kill lands at a different instant each try. The quick tier tries once; the slow tier
# (--slow) twice more; benchmarks/crash_harness.py --phase announced does it at scale.
TRIES = [0, *(pytest.param(n, marks=pytest.mark.slow) for n in (1, 2))]


pytestmark = pytest.mark.usefixtures("api_key")


def killed_at_the_announcement(repo, server: ScriptedServer) -> RunProcess:
    server.script(Reply(text=SUB))
    run = RunProcess(repo, server, "add sub", "--no-plan", kill_at="decision")
    code, _ = run.finish()
    assert code == -9, f"the run ended by itself ({code}): {run.events}"
    assert [e["decision"] for e in run.events if e["type"] == "decision"] == ["accept"]
    return run


@whole_session
@pytest.mark.parametrize("attempt", TRIES)
def test_kill_9_at_the_decision_line_keeps_the_step_and_resume_does_not_ask_again(
    attempt: int, make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    killed_at_the_announcement(repo, scripted_server)
    # Announced: committed already, or decided on disk for the next start to commit.
    kept = titles(repo) == ["add sub", "initial"] or (repo / ".git" / JOURNAL).exists()
    assert kept, "the accept was announced but nothing of it is on disk"
    asked = len(scripted_server.chat_requests)

    code, err, again = run_to_the_end(repo, scripted_server, None, "--resume")

    assert code == 0, err
    assert titles(repo) == ["add sub", "initial"]
    assert "def sub" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert not (repo / ".git" / JOURNAL).exists()
    # The model was not asked for the accepted step again.
    assert len(scripted_server.chat_requests) == asked
    said = " ".join(str(e.get("message", "")) for e in again.events)
    assert "add sub" in said and ("committed now" in said or "Committed as the last" in said)


def killed_during_the_commit(repo: Path, server: ScriptedServer) -> Path:
    """Accepted, announced, then kill -9 while its pre-commit hook runs; the hook's release
    file is returned (touched already: the hook is gone with its process group)."""
    run, release = accepted_into_a_slow_hook(repo, server)
    run.kill()
    release.touch()
    assert titles(repo) == ["initial"] and (repo / ".git" / JOURNAL).exists()
    return release


@whole_session
def test_a_kill_after_the_journal_and_before_the_announcement_is_committed_not_asked_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """The journal is on disk, the `decision` line is not (the kill came between the two):
    the next start commits the step, and resume takes that commit for the step under review
    instead of proposing it again."""
    repo = make_repo()
    killed_during_the_commit(repo, scripted_server)
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    lines = record.read_text().splitlines(keepends=True)
    record.write_text("".join(x for x in lines if json.loads(x)["type"] != "decision"))
    asked = len(scripted_server.chat_requests)

    code, err, again = run_to_the_end(repo, scripted_server, None, "--resume")

    assert code == 0, err
    assert titles(repo) == ["add sub", "initial"]
    assert len(scripted_server.chat_requests) == asked
    [resumed] = [e for e in again.events if e["type"] == "session_resumed"]
    assert "Committed as the last run was killed: step 1" in resumed["message"]
    assert "proposed again" not in resumed["message"]


@whole_session
def test_an_accept_the_next_start_cannot_commit_is_shown_again_not_asked_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Announced, killed during its hook; meanwhile the hook starts refusing, so the next
    start rolls the accept back and says so. Resume shows the accepted proposal again (with
    --yes: accepted again, refused again by the hook, stopped resumably): the model is not
    asked for the step again."""
    repo = make_repo()
    killed_during_the_commit(repo, scripted_server)
    write_hook(repo, "pre-commit", "echo 'not today' >&2\nexit 1\n")
    asked = len(scripted_server.chat_requests)

    code, _, again = run_to_the_end(repo, scripted_server, None, "--resume")

    assert titles(repo) == ["initial"] and git(repo, "status", "--porcelain") == ""
    assert len(scripted_server.chat_requests) == asked
    said = " ".join(str(e.get("message", "")) for e in again.events)
    assert "making it now failed, so rolled back" in said and "not today" in said
    # Shown again (its tests rerun), not proposed again: no model call above.
    assert {e["step"] for e in again.events if e["type"] == "proposal_ready"} == {1}
    assert code != 0  # stopped at the refused accept: resumable once the hook is fixed
