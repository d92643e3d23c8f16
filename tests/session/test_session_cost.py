"""What one scripted edit costs. Every git process of a one-edit headless session
(prepare, shadow, context, proposal, accept, cleanup) is counted through a `git` on PATH that
logs its arguments, then runs the real git. Upper bounds, so a change that reads the same state
again (or splits one git call into several) shows here before it shows in a benchmark."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import SUB, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.llm import MissingApiKey
from tui_engineer.session import run as runner
from tui_engineer.vcs.shadow import Shadow


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A logging `git` first on PATH; returns the log (one line of arguments per process)."""
    real = shutil.which("git")
    assert real is not None
    folder = tmp_path / "git-wrapper"
    folder.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf \'%s\\n\' "$*" >> "{log}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return log


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@whole_session
async def test_a_one_edit_session_runs_few_git_processes(
    make_repo, scripted_server: ScriptedServer, git_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    git_log.unlink(missing_ok=True)

    result, _seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)

    done = calls(git_log)
    assert result.exit_code == 0, result.message
    assert "def sub" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    # The repository's state is read once at start (not again for the detached-HEAD notice).
    assert sum(c.startswith("status") for c in done) <= 4, done
    # 57 before the state was read once per check (porcelain v2 names the branch and HEAD), the
    # identity and signing settings in one `git config`, accept reused the listed changes, and
    # the shadow was no longer reset just before its removal. +2: the baseline names the
    # starting tree (add -A, write-tree) to find a result recorded for it. +19 (issue 33, part
    # 2): each test run, the baseline's too, is bracketed by snapshots of the tree (add -A,
    # write-tree before; add -A, write-tree, diff-tree after: engine/steps/test_writes.py), which is
    # how files the tests write are told from the step's. One snapshot could serve as the next
    # run's "before" when nothing changed between them: not done yet. +4 (issue 35, steps
    # prepared side by side): one more look at the files the tests wrote (add -A, write-tree,
    # diff-tree) and a write-tree, with no step prepared: 64, measured; what asks for it again
    # is not pinned down yet (the note of 2026-11-27 says so). 66 once, in a whole `.ci/run`
    # under load: one more write-tree and diff-tree (the tree looked at once more after a test
    # run, timing-dependent); 64 in 16 runs side by side here. Room for that look, no more.
    # +1 (issue 47): the map asks git which files may differ from its index (ls-files -m), so
    # that it reads none of the others (their blob ids come with the listing, in one call).
    # +3 (issues 46 and 52): where the pre-commit hook is (rev-parse --git-path), asked once
    # before review, and the accept's files written beside then renamed, the index updated last
    # (update-index, twice): 70, measured.
    assert len(done) <= 70, f"{len(done)} git processes:\n" + "\n".join(done)


async def test_the_shadow_is_made_while_the_model_client_loads(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The openai SDK's import (most of start-up's CPU) no longer comes before the git work:
    here the model client is only made once the shadow exists, and the session still runs."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    made = threading.Event()
    real_create, real_make = Shadow.create, runner.make_model

    def create(*args: object, **kwargs: object) -> Shadow:
        shadow = real_create(*args, **kwargs)
        made.set()
        return shadow

    def make_model(*args: object) -> object:
        assert made.wait(10), "the shadow waited for the model client"
        return real_make(*args)

    monkeypatch.setattr(Shadow, "create", staticmethod(create))
    monkeypatch.setattr(runner, "make_model", make_model)
    scripted_server.script(Reply(text=SUB))
    result, _seen = await run_headless(make_repo(), "add sub", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, result.message


async def test_no_api_key_is_still_refused_before_any_call_and_leaves_no_shadow(
    make_repo, scripted_server: ScriptedServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    repo = make_repo()
    with pytest.raises(MissingApiKey, match="OPENAI_API_KEY"):
        await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert scripted_server.chat_requests == []
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
    assert not cache.exists() or not any(cache.iterdir())
    assert git(repo, "status", "--porcelain") == ""
