"""The suite's default parallelism (tests/workers.py): a run naming no `-n` gets two pytest-xdist
workers a core, `-n 0` runs in one process. Real pytest processes over a one-test suite."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.workers import WORKERS_PER_CORE

REPO = Path(__file__).resolve().parents[1]
CORES = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], f"created: {WORKERS_PER_CORE * CORES}/{WORKERS_PER_CORE * CORES} workers"),
        (["-n", "0"], None),
    ],
    ids=["default", "n0"],
)
def test_a_run_naming_no_n_gets_workers(tmp_path: Path, args: list[str], said: str | None) -> None:
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_XDIST_AUTO_NUM_WORKERS", None)
    plugins = ["-p", "no:cacheprovider", "-p", "xdist.plugin", "-p", "tests.workers"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout + done.stderr
    if said:
        assert said in done.stdout
    else:
        assert "workers" not in done.stdout
