"""Bounded model calls end to end (issue 9): every call carries a reply cap, a budget cuts a
stream mid-call and the session stops cleanly, and a failed call leaves its trace in the run
record. Real engine, real openai client over HTTP, real git and pytest."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import SUB, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

pytestmark = pytest.mark.usefixtures("api_key")


def record_of(repo: Path) -> list[dict]:
    (path,) = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


@whole_session
async def test_every_call_carries_its_kind_of_reply_cap(make_repo, scripted_server) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    result, _ = await run_headless(
        repo, "add sub", scripted_server.base_url, reply_tokens_propose=3000
    )
    assert result.exit_code == 0
    caps = [r.body["max_completion_tokens"] for r in scripted_server.chat_requests]
    assert caps == [2048, 3000]  # plan default, propose from config


async def test_time_budget_cuts_a_stream_and_the_session_stops_cleanly(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text="thinking " * 800, chunk_delay=0.05, report_usage=False))
    started = time.monotonic()
    # No baseline: the first model call waits for the starting commit's tests to start (issue
    # 33, part 4), which would spend this small budget before the stream it is about. 6 s, not
    # 2: on a loaded machine (CI's README pass at load 17) the session took 2.7 s to get to
    # its first call, and the budget ran out before the stream this test is about.
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, plan=False, max_wall_seconds=6.0,
        baseline=False,
    )  # fmt: skip
    assert time.monotonic() - started < 20  # not the 40 s the reply would stream for
    assert result.outcome == "budget" and result.exit_code == 1
    assert "during a model call" in result.message
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]
    (failed,) = seen.of(ev.ModelCallFailed)
    assert failed.partial_reply.startswith("thinking")
    assert failed.completion_tokens > 0 and failed.prompt_tokens > 0
    # the record keeps the partial reply, its size and the usage, not just "error"
    kinds = [e["type"] for e in record_of(repo)]
    assert "model_call_failed" in kinds
    live = [e for e in seen.of(ev.UsageUpdated) if e.estimated]
    assert live and live[-1].completion_tokens > 0  # counted while streaming, marked estimated


@whole_session
async def test_broken_reply_is_retried_and_counted_in_the_record(make_repo, scripted_server):
    repo = make_repo()
    scripted_server.script(Reply(text="a b c", malformed_after=1), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert result.exit_code == 0
    assert [r.reason for r in seen.of(ev.ModelRetried)] == ["malformed"]
    exchange = [e for e in record_of(repo) if e["type"] == "model_exchange"]
    assert exchange[0]["retries"] == 1


@whole_session
async def test_context_budget_bounds_the_file_contents_in_a_prompt(make_repo, scripted_server):
    big = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(400))  # ~11 k chars
    repo = make_repo({**SAMPLE_FILES, "big.py": big})
    scripted_server.script(Reply(text=SUB), Reply(text=SUB))
    await run_headless(repo, "change big.py", scripted_server.base_url, plan=False)
    await run_headless(
        repo, "change big.py", scripted_server.base_url, plan=False, context_budget=1000
    )
    full, small = (len(str(r.messages)) for r in scripted_server.chat_requests)
    assert "def f399" in str(scripted_server.chat_requests[0].messages)
    assert "big.py: (not shown: context budget reached)" in str(
        scripted_server.chat_requests[1].messages
    )
    assert small < full - 9000
