"""Closing the terminal (the window, an ssh connection) while the app works: the app must stop
cleanly, not hang. Before, Textual's output thread died on the closed terminal and the app
stayed alive for ever, stuck writing to it, with its shadow worktree left behind."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tui.test_demo_tmux import TmuxPane, pane  # noqa: F401 (fixture)
from tui_engineer.records.listing import list_runs

pytestmark = pytest.mark.slow  # a real terminal (tmux) running the installed command


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def shadows() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
    return list(folder.glob("*/*")) if folder.is_dir() else []


def test_closing_the_terminal_during_a_test_run_stops_the_app_cleanly(
    pane: TmuxPane,  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    folder = tmp_path / "demo"
    demo = f"{shlex.quote(sys.executable)} -m tui_engineer demo --dir {shlex.quote(str(folder))}"
    pane.start(f"exec {demo}", (120, 40))
    pane.wait_text("tests running")  # mid-step: a shadow exists and a test run is going
    pid = int(pane.tmux("list-panes", "-t", "demo", "-F", "#{pane_pid}").strip())
    assert shadows()
    subprocess.run(["tmux", "-L", pane.socket, "kill-session", "-t", "demo"], check=True)

    deadline = time.monotonic() + 30
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not alive(pid), "the app is still running after its terminal closed"
    # The session's shadow is removed, and so is the next step's when the pipeline was
    # preparing it at that moment ("-next1").
    assert shadows() == []
    [repo] = [p for p in folder.iterdir() if p.is_dir()]
    [run] = list_runs(repo)
    assert run.outcome == "quit"
