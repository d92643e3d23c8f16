"""A CI timeout or a closed terminal (SIGTERM, SIGHUP) stops a session cleanly: no shadow left,
the record says it was stopped, and the next run has nothing to clean up."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine_support import KEY, SUB
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.tui.test_demo_tmux import TmuxPane, pane  # noqa: F401 (fixture)
from tests.tui.test_terminal_closed import alive
from tui_engineer.records.listing import list_runs


def shadows(home: Path) -> list[Path]:
    folder = home / "tui-engineer" / "worktrees"
    return [p for p in folder.glob("*/*")] if folder.is_dir() else []


@whole_session
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_model_call_removes_the_shadow(
    sig: signal.Signals, make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB, delay=30))
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    cache = Path(env["XDG_CACHE_HOME"])
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub", "--yes", "--no-plan"]
    command += ["--base-url", scripted_server.base_url, "--model", "test-model"]
    proc = subprocess.Popen(command, cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not scripted_server.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert shadows(cache), "the session should have its shadow while it runs"
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 1
    assert shadows(cache) == []
    assert list((cache / "tui-engineer" / "worktrees").glob("*")) == []  # no empty folder left
    assert (
        subprocess.run(
            ["git", "worktree", "list"], cwd=repo, capture_output=True, text=True
        ).stdout.count("\n")
        == 1
    )
    [run] = list_runs(repo)
    assert run.outcome == "quit"
    assert "stopped by SIG" in err


@whole_session
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_closing_the_terminal_of_a_headless_run_stops_it_cleanly(
    make_repo,
    scripted_server,
    pane: TmuxPane,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`tui-engineer run` in a terminal that goes away (its window closed) while the model is
    thinking: its live status line writes every second, and after the hang-up every write to
    the terminal fails (EIO). It must still stop within a bound, remove its shadow and record
    the session as quit, as the TUI does (tests/tui/test_terminal_closed.py)."""
    repo = make_repo()
    scripted_server.script(Reply(text=SUB, delay=60))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the tmux server passes on this environment
    cache = Path(os.environ["XDG_CACHE_HOME"])
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub", "--yes", "--no-plan"]
    command += ["--base-url", scripted_server.base_url, "--model", "test-model"]
    pane.start(f"cd {shlex.quote(str(repo))} && exec {shlex.join(command)}", (100, 30))
    pane.wait_text("waiting for the model")  # the live line is being rewritten each second
    pid = int(pane.tmux("list-panes", "-t", "demo", "-F", "#{pane_pid}").strip())
    assert shadows(cache), "the session should have its shadow while it runs"
    subprocess.run(["tmux", "-L", pane.socket, "kill-session", "-t", "demo"], check=True)

    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(pid), "the run is still going after its terminal closed"
    assert shadows(cache) == []
    [run] = list_runs(repo)
    assert run.outcome == "quit"
