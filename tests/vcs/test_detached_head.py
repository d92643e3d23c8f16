"""A detached HEAD is named before anything is committed on it (issue 10, finding 7): the
headless command prints it as a note at the start, the TUI says it in the chat when ready."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, make_app, wait_for
from tests.tui.test_app_session import chat_text


@pytest.fixture
def detached(make_repo) -> Path:
    repo = make_repo()
    git(repo, "checkout", "-q", "--detach")
    return repo


def _note(repo: Path) -> str:
    short = git(repo, "rev-parse", "--short=7", "HEAD")
    return f"HEAD is detached at {short}: accepted steps will be committed on it, not on a branch"


@whole_session
def test_headless_names_the_detached_head_before_committing(
    detached: Path, scripted_server: ScriptedServer
) -> None:
    note = _note(detached)
    scripted_server.script(Reply(text=SUB))
    args = ["run", "add sub", "--yes", "--no-plan", "--base-url", scripted_server.base_url]
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", *args, "--model", "test-model", "-C", str(detached)],
        capture_output=True,
        text=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    said = next(i for i, line in enumerate(lines) if note in line)
    committed = next(i for i, line in enumerate(lines) if "✓ committed" in line)
    assert said < committed, done.stdout
    assert git(detached, "log", "-1", "--format=%s") == "add sub"
    assert git(detached, "rev-parse", "--abbrev-ref", "HEAD") == "HEAD"  # still detached


def test_a_branch_gets_no_such_note(make_repo) -> None:
    from tui_engineer.vcs.repo import detached_head_notice

    assert detached_head_notice(make_repo()) is None


async def test_the_tui_says_it_in_the_chat(
    detached: Path, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    app = make_app(detached, scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        await wait_for(pilot, lambda: "HEAD is detached at" in chat_text(app))
        assert _note(detached) in chat_text(app).replace("\n", " ")
        await pilot.press("q")
