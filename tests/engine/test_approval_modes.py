"""Approval modes end to end (real client over HTTP, real git and pytest): in `auto` a step
whose tests pass is committed without asking; one that fails is asked about as in `ask`; each
commit's body says which mode accepted it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import MUL_BUGGY, SUB, StepReviewer, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.config import load_settings
from tui_engineer.config.settings import ConfigError
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision, Proposal

pytestmark = pytest.mark.usefixtures("api_key")


class Human(StepReviewer):
    """Accepts whatever it is shown, noting which steps it was asked about."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    async def review(self, proposal: Proposal) -> Decision:
        self.asked.append(proposal.step.index)
        return Decision.accept()


def bodies(repo: Path) -> list[str]:
    """Commit messages, newest first, the initial commit left out."""
    return git(repo, "log", "--format=%B%x00").split("\x00")[:-2]


def two_steps(server: ScriptedServer) -> None:
    """Step 1 (sub) passes; step 2 (mul) fails, and no fix is tried (max_fix_attempts 0)."""
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text="Adding sub.\n\n" + SUB),
        Reply(text="Adding mul.\n\n" + MUL_BUGGY),
    )


@whole_session
async def test_auto_commits_a_passing_step_unasked_and_asks_about_a_failing_one(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    human = Human()
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=human,
        approval="auto", max_fix_attempts=0,
    )  # fmt: skip

    assert result.exit_code != 0 or result.outcome == "done"
    assert human.asked == [2]  # the passing step went through without a question
    newest, first = bodies(repo)
    assert "Accepted: auto (tests passed)" in first
    assert "Accepted: by you" in newest
    decisions = [(d.step, d.by) for d in seen.of(ev.DecisionMade)]
    assert decisions == [(1, "auto (tests passed)"), (2, "by you")]  # in the run record too


@whole_session
async def test_ask_asks_about_every_step_and_says_so_in_the_commit(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    human = Human()
    await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=human,
        approval="ask", max_fix_attempts=0,
    )  # fmt: skip

    assert human.asked == [1, 2]
    assert all("Accepted: by you" in body for body in bodies(repo))


def test_a_repository_may_ask_for_review_but_not_turn_it_off(make_repo) -> None:
    repo = make_repo()
    mine = repo / "none.toml"  # no user config
    (repo / ".tui-engineer.toml").write_text('approval = "ask"\n')
    assert load_settings(repo, {}, env={}, user_config=mine).settings.approval == "ask"
    (repo / ".tui-engineer.toml").write_text('approval = "auto"\n')
    with pytest.raises(ConfigError, match="approval = 'auto' must not be set in a repository"):
        load_settings(repo, {}, env={}, user_config=mine)
    (repo / ".tui-engineer.toml").write_text('approval = "ask"\n')
    yours = load_settings(repo, {"approval": "auto"}, env={}, user_config=mine)
    assert yours.settings.approval == "auto"  # your flag wins over the repository's "ask"


def run_cli(repo: Path, url: str, *flags: str, answers: str = "") -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub and mul", *flags]
    command += ["--max-fix-attempts", "0", "--base-url", url, "--model", "test-model"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-secret-key-0123456789"}
    return subprocess.run(
        [*command, "-C", str(repo)], input=answers, capture_output=True, text=True, env=env,
        timeout=120,
    )  # fmt: skip


@whole_session
def test_run_approval_auto_asks_on_the_terminal_only_about_the_failing_step(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    done = run_cli(repo, scripted_server.base_url, "--approval", "auto", answers="a\n")

    assert done.stdout.count("[a]ccept") == 1, done.stdout  # step 2 only
    assert "Step 2: Add mul — tests" in done.stdout
    assert "Step 1: Add sub — tests" not in done.stdout
    assert "accepted: auto (tests passed)" in done.stdout  # step 1, said as it goes
    newest, first = bodies(repo)
    assert "Accepted: auto (tests passed)." in first
    assert "Accepted: by you." in newest


@whole_session
def test_run_yes_is_auto_and_stops_at_the_failing_step(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    done = run_cli(repo, scripted_server.base_url, "--yes")

    assert done.returncode != 0  # the failing step was not committed
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert "Accepted: auto (tests passed)." in bodies(repo)[0]
