"""Benchmark: `tui-engineer bench` with the oracle server (instant, always-right answers, a few
broken on the first try), so the time measured is the harness's and the engine's, not a model's.

1. Harness overhead per task: each run's wall time minus the time its test commands took
   (the visible tests in the session and the hidden tests after it). Target ≤ 1 s.
2. The whole humaneval suite (164 tasks) with --workers 2. Target < 5 minutes on 2 cores.

Run: python benchmarks/bench_harness.py [--overhead-tasks N] [--tasks N] [--workers N]
Prints the numbers and the results table (oracle answers: this proves the harness, not a model).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.oracle_server import OracleServer  # noqa: E402
from tui_engineer.bench.humaneval import humaneval_tasks  # noqa: E402
from tui_engineer.bench.results import read_results  # noqa: E402
from tui_engineer.cli.main import main  # noqa: E402


def test_seconds(record: Path) -> float:
    events = [json.loads(line) for line in record.read_text().splitlines()]
    return sum(e["duration"] for e in events if e["type"] == "tests_finished")


def bench(oracle: OracleServer, out: Path, tasks: int, workers: int) -> float:
    args = ["bench", "humaneval", "--limit", str(tasks), "--workers", str(workers),
            "--model", "oracle", "--base-url", oracle.base_url, "--no-progress",
            "--config", "default", "--out", str(out)]  # fmt: skip
    started = time.monotonic()
    assert main(args) == 0
    return time.monotonic() - started


def main_() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--overhead-tasks", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=164)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-oracle")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # as a clean target repo would have it
    tasks = humaneval_tasks()
    broken = {t.name for t in tasks[::10]}
    with tempfile.TemporaryDirectory() as tmp, OracleServer(tasks, broken=broken) as oracle:
        folder = Path(tmp) / "overhead"
        bench(oracle, folder, args.overhead_tasks, 1)
        runs = read_results(folder)
        tests = [test_seconds(folder / r.record) + r.hidden_seconds for r in runs]
        overheads = [r.wall_seconds - t for r, t in zip(runs, tests, strict=True)]
        walls = [r.wall_seconds for r in runs]
        print(f"  test commands per task: median {statistics.median(tests):.2f} s")
        print(f"overhead per task ({args.overhead_tasks} tasks, 1 worker): "
              f"median {statistics.median(overheads):.2f} s, max {max(overheads):.2f} s "
              f"(wall median {statistics.median(walls):.2f} s) — target ≤ 1 s")  # fmt: skip
        if args.tasks < 1:
            return
        seconds = bench(oracle, Path(tmp) / "all", args.tasks, args.workers)
        print(f"{args.tasks} humaneval tasks, --workers {args.workers}: {seconds:.0f} s "
              f"({seconds / 60:.1f} min) — target < 5 min")  # fmt: skip


if __name__ == "__main__":
    main_()
