"""A session against a local server run with its defaults (issue 21 §3): llama-cpp-python with a
4,096-token window, nothing set in the config, and a model too small for the work. The window
is learned and shown with its source; a plan reply that is no plan is stopped early; two of them
end the session with one sentence saying why. Real engine, real openai client over HTTP (the
scripted server answering as llama-cpp-python does), real git and pytest."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, SUB, Collector, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev
from tui_engineer.engine.session import SessionResult

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


async def test_a_model_that_writes_no_plan_ends_the_session_saying_why(make_repo, llama_cpp_python):
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


async def test_a_model_that_repeats_the_request_back_ends_the_session(make_repo, llama_cpp_python):
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
    llama_cpp_python.script(Reply(text=RAMBLE), Reply(text=plan_reply("Add sub")), Reply(text=SUB))
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


# With llama-cpp-python's own default (llama-2's [INST] format, gemma has no template) the plan
# replies were short non-plans, so the request became one step, and the propose reply then ran
# to the window: 639 s for the session. An edit reply is watched too.
NOT_A_PLAN = "I can help with that. What would you like the sub function to do?"
# Prose that never loops and never edits: stopped at the bound (400 tokens), not at the window.
MUSING = "\n".join(
    f"Thought {i}: a sub function might be named minus_{i} instead." for i in range(900)
)


# gemma3-270m under llama-2's format (read from a kept run record): our own correction written
# back inside its prose, so "```json" and "steps" came with no plan, for 2,000 tokens.
OUR_WORDS_BACK = "\n".join(
    f"Test-{i}: This plan is invalid: No plan found: reply with one ```json block holding "
    f'{{"steps": [...]}}. Send the fixed plan for case {i}. [/INST]'
    for i in range(400)
)


async def test_a_plan_sign_inside_a_sentence_is_no_plan(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=OUR_WORDS_BACK), Reply(text=OUR_WORDS_BACK))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.message.startswith("Stopped: the replies of gemma are unusable: asked twice")
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["plan", "plan"]
    assert all(f.stopped and f.completion_tokens < 300 for f in stopped)


async def test_a_model_that_writes_no_edit_ends_the_session_saying_why(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(
        Reply(text=NOT_A_PLAN), Reply(text=NOT_A_PLAN), Reply(text=MUSING), Reply(text=RAMBLE)
    )
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed" and result.exit_code == 1
    message = result.message
    assert message.startswith("Stopped: the replies of gemma are unusable: asked twice for an edit")
    assert "tokens with no edit in them, the second repeating its own lines" in message
    assert message.count(". ") == 0  # one sentence
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["propose", "fix"]  # each stopped early, then the end
    assert 400 <= stopped[0].completion_tokens < 500  # no sign of an edit in 400 tokens
    assert stopped[1].completion_tokens < 150  # looping on its own lines: stopped sooner
    assert len(llama_cpp_python.chat_requests) == 4
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]


async def test_a_stopped_edit_reply_is_told_why_and_a_good_one_goes_on(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=MUSING), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s").splitlines()[0].endswith("Add sub")
    [refused] = seen.of(ev.EditRefused)
    assert "was not an edit: 40" in refused.reason and "stopped" in refused.shape_details
    fix = llama_cpp_python.chat_requests[2].messages
    assert fix[-1]["content"].startswith("Your reply was stopped after 40")
    assert len(fix[-2]["content"]) < 2000  # the stopped reply, not 800 lines of it


async def run_then_replay(
    repo: Path, server: ScriptedServer, copy: Path, *replies: Reply
) -> tuple[SessionResult, SessionResult, Collector]:
    """A session with `replies`, then its record replayed (`run --replay`, as `bench --replay`
    does) on `copy`, the same starting commit: both results, and the replay's events."""
    shutil.copytree(repo, copy)
    server.script(*replies)
    result, _ = await run_headless(repo, "add sub", server.base_url, model="gemma")
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    asked = len(server.chat_requests)
    again, seen = await run_headless(copy, "add sub", server.base_url, model="gemma", replay=record)
    assert len(server.chat_requests) == asked  # no model server was asked
    return result, again, seen


async def test_a_record_with_a_stopped_reply_replays_to_the_same_commit(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    # A stopped reply is a call too, recorded as a failed one: a replay gave that call the reply
    # after it, and went differently from there.
    repo, copy = make_repo(), tmp_path / "copy"
    replies = Reply(text=plan_reply("Add sub")), Reply(text=MUSING), Reply(text=SUB)
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *replies)
    assert result.exit_code == 0
    assert again.exit_code == 0, again.message
    [refused] = seen.of(ev.EditRefused)  # the stop, replayed
    assert "was not an edit: 40" in refused.reason
    log = git(copy, "log", "--format=%s").splitlines()
    assert log == git(repo, "log", "--format=%s").splitlines()
    assert git(copy, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "HEAD^{tree}")


async def test_a_record_ended_by_two_stops_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    replies = [Reply(text=NOT_A_PLAN)] * 2 + [Reply(text=MUSING), Reply(text=RAMBLE)]
    copy = tmp_path / "copy"
    result, again, _ = await run_then_replay(make_repo(), llama_cpp_python, copy, *replies)
    assert "the second repeating its own lines" in result.message  # the watch's reasons, kept
    assert again.message == result.message


async def test_an_edit_after_a_long_explanation_is_not_stopped(make_repo, llama_cpp_python):
    repo = make_repo()
    why = "The sub function mirrors add, so it belongs right after it in calc.py. " * 20
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=why + "\n\n" + SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0  # ~300 tokens of prose first: a real model's analysis
    assert not seen.of(ev.EditRefused)
    assert len(llama_cpp_python.chat_requests) == 2


async def test_after_a_stopped_reply_one_more_without_an_edit_ends_the_session(
    make_repo, llama_cpp_python
):
    repo = make_repo()
    llama_cpp_python.script(
        Reply(text=plan_reply("Add sub")), Reply(text=MUSING), Reply(text=NOT_A_PLAN)
    )
    result, _ = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed"
    assert "asked twice for an edit, it wrote 40" in result.message
    assert f"and then {len(NOT_A_PLAN) // 4} tokens with no edit in them" in result.message
    assert len(llama_cpp_python.chat_requests) == 3  # no third and fourth fix attempt


def echo_last(request) -> Reply:
    """What gemma3-270m did under llama-2's format after a stopped reply: it wrote our message
    back, `<<<<<<< SEARCH` in its prose, until the window was full."""
    said = request.messages[-1]["content"]
    return Reply(text=f"[INST]{said} [/INST] >>\n\n" * 60)


async def test_edit_markers_inside_prose_are_no_sign_of_an_edit(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=MUSING), echo_last)
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert "asked twice for an edit" in result.message
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["propose", "fix"]
    assert stopped[1].completion_tokens < 500  # stopped at the bound, not at the window


async def test_a_whole_file_in_a_bare_fence_stopped_early_is_taught_the_file_block(
    make_repo, llama_cpp_python
):
    # A model that writes the whole file in a fence with no markers is stopped 400 tokens in
    # (nothing in it could be applied); what it is told is how to send a file, as it would be
    # had the reply run to its end.
    repo = make_repo()
    code = "".join(f"def f{n}(a, b):\n    return a + b + {n}\n\n\n" for n in range(200))
    whole = "Here is the updated calc.py:\n\n```python\n" + code + "```\n"
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=whole), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0
    told = llama_cpp_python.chat_requests[2].messages[-1]["content"]
    assert "Your reply was stopped after" in told
    assert "shows `calc.py` in a fenced block without edit markers" in told
    assert "<<<<<<< FILE" in told
