"""A session against a local server run with its defaults (issue 21 §3): llama-cpp-python with a
4,096-token window, nothing set in the config, and a model too small for the work. The window
is learned and shown with its source; a plan reply that is no plan is stopped early; two of them
end the session with one sentence saying why. Real engine, real openai client over HTTP (the
scripted server answering as llama-cpp-python does), real git and pytest."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.engine_support import KEY, SUB, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev

MODEL = "/models/gemma-3-270m-q4_k_m.gguf"  # llama-cpp-python lists the file it loaded
RAMBLE = "def f(x):\n    return x + 1\n" * 800  # what a tiny base model writes instead


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.fixture
def llama_cpp_python():
    with ScriptedServer(flavour="llama-cpp-python", context_window=4096, models=[MODEL]) as s:
        yield s
    s.check()


async def test_a_model_that_writes_no_plan_ends_the_session_saying_why(
    make_repo, llama_cpp_python
):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=RAMBLE), Reply(text=RAMBLE))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed" and result.exit_code == 1
    message = result.message
    assert message.startswith("Stopped: the replies of gemma are unusable: asked twice for a plan")
    assert message.count(". ") == 0  # one sentence
    assert 'it began: "def f(x): return x + 1' in message
    plans = llama_cpp_python.chat_requests
    assert len(plans) == 2  # each stopped early: no third call, no one-step fallback
    assert [e.message for e in seen.of(ev.ErrorEvent)] == [message]
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]


def echo(request) -> Reply:
    """What gemma3-270m (a base model) did: copy the request back, its example plan included,
    until the window was full."""
    asked = next(m["content"] for m in request.messages if m["role"] == "user")
    return Reply(text=(asked + "\n") * 20)


async def test_a_model_that_repeats_the_request_back_ends_the_session(
    make_repo, llama_cpp_python
):
    repo = make_repo()
    llama_cpp_python.script(echo, echo)
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed"
    assert "asked twice for a plan, it repeated the prompt back both times" in result.message
    assert len(llama_cpp_python.chat_requests) == 2
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["plan", "plan"]
    assert all(f.completion_tokens < 150 for f in stopped)  # stopped early, not at the window


async def test_the_learned_window_is_shown_with_where_it_came_from(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0
    notes = [e.message for e in seen.of(ev.Notice)]
    assert (
        "Context window: 4,096 tokens (llama-cpp-python's server: its answer to an oversized "
        "prompt); set context_window to change it." in notes
    )
    caps = [r.body["max_completion_tokens"] for r in llama_cpp_python.chat_requests]
    assert all(cap < 4096 for cap in caps)  # the propose call's 8,192 fits the window


async def test_one_reply_with_no_plan_gets_a_correction_round(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(
        Reply(text=RAMBLE), Reply(text=plan_reply("Add sub")), Reply(text=SUB)
    )
    result, _ = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0
    correction = llama_cpp_python.chat_requests[1].messages
    assert "No plan found" in correction[-1]["content"]
    assert len(correction[-2]["content"]) < 1200  # the stopped reply, not 800 lines of it


async def test_a_configured_window_is_not_announced(make_repo):
    repo = make_repo()
    with ScriptedServer(flavour="llama-cpp-python", context_window=4096, models=[MODEL]) as s:
        s.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
        result, seen = await run_headless(
            repo, "add sub", s.base_url, model="gemma", context_window=4096
        )
    assert result.exit_code == 0
    assert not [e for e in seen.of(ev.Notice) if "Context window" in e.message]
    assert not [r for r in s.requests if r.path == "/v1/completions"]  # nothing probed
