"""A session against a local server run with its defaults (issue 21 §3): llama-cpp-python with a
4,096-token window, nothing set in the config, and a model too small for the work. The window
is learned and shown with its source; a plan reply that is no plan is stopped early; two of them
end the session with one sentence saying why. Real engine, real openai client over HTTP (the
scripted server answering as llama-cpp-python does), real git and pytest."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import (
    MUL_ON_SUB,
    SUB,
    Collector,
    StepReviewer,
    edit,
    plan_reply,
    run_headless,
)
from tests.scripted_server import Reply, ScriptedServer, unused_base_url
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.approval import AutoReviewer
from tui_engineer.engine.reviews.review import Decision, Proposal
from tui_engineer.engine.session import SessionResult
from tui_engineer.llm.client import CONTINUE_PROMPT

MODEL = "/models/gemma-3-270m-q4_k_m.gguf"  # llama-cpp-python lists the file it loaded
RAMBLE = "def f(x):\n    return x + 1\n" * 800  # what a tiny base model writes instead


pytestmark = pytest.mark.usefixtures("api_key")


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


@whole_session
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


@whole_session
async def test_one_reply_with_no_plan_gets_a_correction_round(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=RAMBLE), Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    result, _ = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0
    correction = llama_cpp_python.chat_requests[1].messages
    assert "No plan found" in correction[-1]["content"]
    assert len(correction[-2]["content"]) < 1200  # the stopped reply, not 800 lines of it


@whole_session
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


@whole_session
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


@whole_session
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


class AfterItsPreparation(StepReviewer):
    """`--yes`, except that step 1 is accepted only once step 2's preparation has ended (made
    or not), as when a human reads step 1 for a while: else, on a loaded machine, step 1 can be
    committed before step 2's preparation has made its call, and step 2 is proposed in its
    turn instead."""

    def __init__(self) -> None:
        self.prepared = asyncio.Event()
        self.auto = AutoReviewer()

    def sink(self, event: ev.Event) -> None:
        failed = isinstance(event, ev.Notice) and "could not be prepared ahead" in event.message
        if failed or isinstance(event, ev.NextStepPrepared):
            self.prepared.set()

    async def review(self, proposal: Proposal) -> Decision:
        if proposal.step.index == 1:
            await asyncio.wait_for(self.prepared.wait(), 60)
        return await self.auto.review(proposal)


async def run_then_replay(
    repo: Path, server: ScriptedServer, copy: Path, *replies: Reply, **flags: object
) -> tuple[SessionResult, SessionResult, Collector]:
    """A session with `replies`, then its record replayed (`run --replay`, as `bench --replay`
    does) on `copy`, the same starting commit, with no server listening at its base URL: both
    results, and the replay's events. With a pipeline, step 1 waits for step 2's preparation
    in both runs (AfterItsPreparation)."""
    shutil.copytree(repo, copy)
    server.script(*replies)

    async def run(where: Path, base_url: str, **more: object) -> tuple[SessionResult, Collector]:
        if not flags.get("pipeline"):
            return await run_headless(where, "add sub", base_url, model="gemma", **flags, **more)
        human = AfterItsPreparation()
        return await run_headless(
            where, "add sub", base_url, model="gemma", reviewer=human, sink=human.sink,
            **flags, **more,
        )  # fmt: skip

    result, _ = await run(repo, server.base_url)
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    asked = len(server.chat_requests)
    again, seen = await run(copy, unused_base_url(), replay=record)
    assert len(server.chat_requests) == asked  # no model server was asked
    return result, again, seen


def same_commits(repo: Path, copy: Path) -> bool:
    """The replay's branch holds the recorded session's commits: the same titles, files."""
    log = git(copy, "log", "--format=%s") == git(repo, "log", "--format=%s")
    return log and git(copy, "rev-parse", "HEAD^{tree}") == git(repo, "rev-parse", "HEAD^{tree}")


@whole_session
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


@whole_session
async def test_a_record_ended_by_two_stops_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    replies = [Reply(text=NOT_A_PLAN)] * 2 + [Reply(text=MUSING), Reply(text=RAMBLE)]
    copy = tmp_path / "copy"
    result, again, _ = await run_then_replay(make_repo(), llama_cpp_python, copy, *replies)
    assert "the second repeating its own lines" in result.message  # the watch's reasons, kept
    assert again.message == result.message


# Replies cut by the token limit. One cut at its reply cap is continued (llm/client.py) and recorded
# whole, as one reply; one cut at the window (or still cut after its continuations) is not used:
# the session ends saying so, or, for a step prepared ahead, the step is proposed again in its turn.
HALF = len(MUL_ON_SUB) // 2
# An edit that runs past the 4,096-token window: llama-cpp-python cuts it there ("length").
MUL_TABLE = edit(
    "calc.py",
    "    return a - b\n",
    "    return a - b\n"
    + "".join(f"\n\ndef mul_{n}(a):\n    return a * {n}\n" for n in range(600)),
)


@whole_session
async def test_a_reply_continued_after_its_cap_replays_to_the_same_commits(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    repo, copy = make_repo(), tmp_path / "copy"
    replies = (
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL_ON_SUB[:HALF], finish_reason="length"),  # cut at its 600-token cap
        Reply(text=MUL_ON_SUB[HALF:]),
    )
    flags = {"reply_tokens_propose": 600}
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *replies, **flags)
    assert result.exit_code == 0, result.message
    continued = llama_cpp_python.chat_requests[3].messages
    assert continued[-1]["content"] == CONTINUE_PROMPT  # the cut reply was continued
    assert again.exit_code == 0, again.message
    assert (again.outcome, again.message) == (result.outcome, result.message)
    assert same_commits(repo, copy)
    assert git(copy, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    replayed = [e.reply for e in seen.of(ev.ModelExchange)]
    assert replayed[-1] == MUL_ON_SUB  # the two parts, one reply


@whole_session
async def test_a_record_ended_by_a_reply_cut_at_the_window_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    # The session ended on the cut reply, its sentence in the record: the replay ran out of
    # replies there instead, and ended saying the session "went differently".
    repo, copy = make_repo(), tmp_path / "copy"
    replies = Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=MUL_TABLE)
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *replies)
    assert result.outcome == "failed"
    assert "was cut off at the model's context window (4,096 tokens" in result.message
    assert (again.outcome, again.exit_code) == ("failed", 1)
    assert again.message == result.message
    assert [e.message for e in seen.of(ev.ErrorEvent)] == [result.message]
    assert same_commits(repo, copy)  # step 1 committed, nothing of the cut reply
    assert git(copy, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    [failed] = seen.of(ev.ModelCallFailed)
    assert failed.purpose == "propose" and failed.step == 2
    assert failed.partial_reply.startswith(MUL_TABLE[:200])  # what streamed, streamed again


@whole_session
@pytest.mark.parametrize(
    ("in_its_turn", "commits"),
    [(MUL_ON_SUB, ["Add mul", "Add sub", "initial"]), (MUL_TABLE, ["Add sub", "initial"])],
    ids=["made-in-its-turn", "cut-again-in-its-turn"],
)
async def test_a_step_whose_prepared_reply_was_cut_replays_to_the_same_end(
    make_repo, llama_cpp_python, tmp_path: Path, in_its_turn: str, commits: list[str]
) -> None:
    # Step 2, prepared while step 1 was reviewed, got a reply cut at the window: it was
    # proposed again in its turn. The preparation's failed call is never recorded (its held
    # events are dropped): where the turn's reply was cut too, the replay's preparation took
    # the turn's recorded failure, and the turn found no reply left ("went differently").
    repo, copy = make_repo(), tmp_path / "copy"
    replies = (
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL_TABLE),
        Reply(text=in_its_turn),
    )
    flags = {"pipeline": True}
    result, again, _ = await run_then_replay(repo, llama_cpp_python, copy, *replies, **flags)
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    assert "Step 2 could not be prepared ahead (The reply from gemma was cut off" in (
        record.read_text()
    )
    assert (again.outcome, again.message) == (result.outcome, result.message)
    assert same_commits(repo, copy)
    assert git(copy, "log", "--format=%s").splitlines() == commits


# Budgets. A session whose budget ran out ends "budget", saying which one; the replay has no
# budget of its own, so it ran out of replies there instead, and ended "failed" saying the
# session "went differently". Step 1 leaves 550 tokens used; step 2's prompt is ~770 tokens.
STEP_1 = (
    Reply(text=plan_reply("Add sub", "Add mul"), usage=(100, 50)),
    Reply(text=SUB, usage=(300, 100)),
)
# Step 2's reply in chunks of ~50 tokens: past what a 2,000-token budget leaves it in a few.
BIG_CHUNKS = [MUL_TABLE[i : i + 200] for i in range(0, len(MUL_TABLE), 200)]


@whole_session
async def test_a_record_ended_by_the_budget_before_a_call_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    repo, copy = make_repo(), tmp_path / "copy"
    flags = {"max_tokens": 1500}  # step 2's call would cross it: not made
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *STEP_1, **flags)
    assert len(llama_cpp_python.chat_requests) == 2
    assert (result.outcome, result.exit_code) == ("budget", 1)
    assert result.message.startswith("Token budget reached: 550 of 1,500 tokens used")
    assert "The call was not made." in result.message
    assert (again.outcome, again.exit_code) == ("budget", 1)
    assert again.message == result.message
    assert [e.message for e in seen.of(ev.ErrorEvent)] == [result.message]
    used = seen.of(ev.UsageUpdated)[-1]
    assert used.prompt_tokens + used.completion_tokens == 550  # the refused call cost nothing
    assert same_commits(repo, copy)
    assert git(copy, "log", "--format=%s").splitlines() == ["Add sub", "initial"]


@whole_session
async def test_a_record_ended_by_the_budget_mid_reply_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    repo, copy = make_repo(), tmp_path / "copy"
    replies = *STEP_1, Reply(text=MUL_TABLE, chunks=BIG_CHUNKS)
    flags = {"max_tokens": 2000}  # step 2's call is made, and cut as it crosses the budget
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *replies, **flags)
    assert (result.outcome, result.exit_code) == ("budget", 1)
    assert result.message.startswith("Token budget reached during a reply: about 2,0")
    assert (again.outcome, again.exit_code) == ("budget", 1)
    assert again.message == result.message
    assert [e.message for e in seen.of(ev.ErrorEvent)] == [result.message]
    assert same_commits(repo, copy)
    assert git(copy, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    [failed] = seen.of(ev.ModelCallFailed)
    assert failed.purpose == "propose" and failed.step == 2
    assert failed.partial_reply.startswith("".join(BIG_CHUNKS[:3]))  # streamed again


@whole_session
async def test_a_record_ended_by_the_budget_while_preparing_ahead_replays_to_the_same_sentence(
    make_repo, llama_cpp_python, tmp_path: Path
) -> None:
    # Step 2, prepared while step 1 was reviewed, was refused by the budget (its events held
    # back, so not recorded), then refused again in its turn: the session ended there.
    repo, copy = make_repo(), tmp_path / "copy"
    flags = {"max_tokens": 1500, "pipeline": True}
    result, again, seen = await run_then_replay(repo, llama_cpp_python, copy, *STEP_1, **flags)
    [record] = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    assert "Step 2 could not be prepared ahead (Token budget reached" in record.read_text()
    assert result.outcome == "budget"
    assert (again.outcome, again.exit_code) == ("budget", 1)
    assert again.message == result.message
    assert [e.message for e in seen.of(ev.ErrorEvent)] == [result.message]
    ahead = [n.message for n in seen.of(ev.Notice) if "could not be prepared ahead" in n.message]
    assert len(ahead) == 1 and "(Token budget reached" in ahead[0]  # as recorded
    assert same_commits(repo, copy)
    assert git(copy, "log", "--format=%s").splitlines() == ["Add sub", "initial"]


@whole_session
async def test_an_edit_after_a_long_explanation_is_not_stopped(make_repo, llama_cpp_python):
    repo = make_repo()
    why = "The sub function mirrors add, so it belongs right after it in calc.py. " * 20
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=why + "\n\n" + SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0  # ~300 tokens of prose first: a real model's analysis
    assert not seen.of(ev.EditRefused)
    assert len(llama_cpp_python.chat_requests) == 2


@whole_session
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


@whole_session
async def test_edit_markers_inside_prose_are_no_sign_of_an_edit(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=plan_reply("Add sub")), Reply(text=MUSING), echo_last)
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert "asked twice for an edit" in result.message
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["propose", "fix"]
    assert stopped[1].completion_tokens < 500  # stopped at the bound, not at the window


@whole_session
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


# gemma3-270m under llama-2's format (read from a kept run record, 2026-11-25): a few lines of
# prose, then the prompt's own example plan copied into a real ```json block at a line's start,
# then paragraphs half-repeating each other and our test-first rule, to the 2,048-token cap.
RUN_ON = "".join(
    f"If we wanted to produce a test suite where step {n} differs from the one before, it "
    f'would be best to run them in separate tests.\n<img src="test/tests/test_{n}.png">\n'
    f"The {n} lines are test_first. The test is run on the old version of the code, where it "
    "must fail, and after the change, where it must pass.\n\n"
    for n in range(60)
)


def copy_the_example(request) -> Reply:
    asked = next(m["content"] for m in request.messages if m["role"] == "user")
    example = re.search(r"^```json\n.*?\n```$", asked, re.DOTALL | re.MULTILINE)
    assert example is not None, "the plan prompt shows no example plan"
    prose = "Test-second: mark a step that changes behaviour with a test.\n\n"
    return Reply(text=prose + example.group(0) + "\n\nThe steps: small ones.\n\n" + RUN_ON)


async def test_a_copy_of_the_prompts_example_plan_is_an_echo(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(copy_the_example, copy_the_example)
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed" and result.exit_code == 1
    assert "asked twice for a plan, it repeated the prompt back both times" in result.message
    stopped = seen.of(ev.ModelCallFailed)
    assert [f.purpose for f in stopped] == ["plan", "plan"]
    assert all(f.stopped and f.completion_tokens < 200 for f in stopped)  # at the block's end
    assert len(llama_cpp_python.chat_requests) == 2  # no one-step fallback, no edit asked


@whole_session
async def test_a_plan_is_whole_once_its_block_closed_and_the_rest_rambles(
    make_repo, llama_cpp_python
):
    """A plan followed by more than the reply cap of talk is used, the talk not waited for."""
    repo = make_repo()
    talk = "".join(f"Note {n}: sub could also take a third argument.\n" for n in range(600))
    llama_cpp_python.script(Reply(text=plan_reply("Add sub") + talk), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0, result.message
    assert git(repo, "log", "--format=%s").splitlines()[0].endswith("Add sub")
    [plan] = [x for x in seen.of(ev.ModelExchange) if x.purpose == "plan"]
    assert plan.finish_reason == "complete"
    assert plan.reply.startswith(plan_reply("Add sub")) and len(plan.reply) < len(talk) // 4


async def test_a_stopped_plan_reply_then_one_with_no_plan_ends_the_session(
    make_repo, llama_cpp_python
):
    """Told why its reply was stopped, gemma wrote 79 tokens of no plan: not worth two edit
    calls of 30 s each (read from a kept run record; the session took 61.5 s)."""
    repo = make_repo()
    llama_cpp_python.script(Reply(text=RAMBLE), Reply(text=NOT_A_PLAN))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.outcome == "failed" and result.exit_code == 1
    assert result.message.startswith(
        "Stopped: the replies of gemma are unusable: asked twice for a plan, it wrote 84 and "
        "then 16 tokens with no plan in them"
    )
    assert 'it began: "I can help with that.' in result.message
    assert len(llama_cpp_python.chat_requests) == 2  # no edit asked for
    assert not seen.of(ev.PlanReady)


# A model sent back the same invalid plan after the correction: that is no echo of the prompt
# but its own reply again, and the session says what is wrong with it.
INVALID_PLAN = (
    "Here is the plan.\n\n```json\n"
    '{"steps": [{"title": "Add sub to calc.py",\n'
    '  "description": "sub(a, b) returns a - b, with its test",\n'
    '  "files": ["calc.py", "tests/test_calc.py"],\n'
    '  "depends_on": [1]}]}\n```\n'
)


@whole_session
async def test_the_same_invalid_plan_twice_is_said_as_invalid(make_repo, llama_cpp_python):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=INVALID_PLAN), Reply(text=INVALID_PLAN), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0, result.message
    notes = [e.message for e in seen.of(ev.Notice)]
    assert any(n.startswith("Plan unusable (steps[0].depends_on may only") for n in notes), notes
    assert not seen.of(ev.ModelCallFailed)


def one_line_plan(fence: str) -> str:
    """A plan written as one line of JSON whose first key is not "steps", long enough that its
    "steps" comes past the 200-token bound of a plan's sign (a key inside a line is no sign)."""
    goal = "Add a sub function to calc.py, next to add, with a test. " * 20
    steps = [{"title": "Add sub", "description": "sub(a, b) returns a - b", "files": ["calc.py"]}]
    plan = json.dumps({"goal": goal, "steps": steps})
    return f"Here is the plan.\n\n{fence}{plan}\n```\n" if fence else plan


@whole_session
@pytest.mark.parametrize("fence", ["```\n", "```json\n", ""], ids=["bare-fence", "json", "bare"])
async def test_a_plan_whose_steps_come_late_in_one_line_is_not_stopped(
    make_repo, llama_cpp_python, fence: str
):
    repo = make_repo()
    llama_cpp_python.script(Reply(text=one_line_plan(fence)), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", llama_cpp_python.base_url, model="gemma")
    assert result.exit_code == 0, result.message
    assert not seen.of(ev.ModelCallFailed)
    assert len(llama_cpp_python.chat_requests) == 2


# What a user pastes into a request (a failure to fix, a style rule), and code in the repository:
# a capable model quotes them before its plan. Neither is an echo of the prompt.
PASTED = (
    "E       AssertionError: sub(3, 5) returned 8, expected -2\n"
    "E        +  where 8 = sub(3, 5)\n"
    "tests/test_calc.py:9: AssertionError in test_sub_negative\n"
    "FAILED tests/test_calc.py::test_sub_negative - AssertionError\n"
)
DOCUMENTED = (
    "def add(a, b):\n"
    '    """Add two numbers.\n\n'
    "    Both may be negative; the result is their plain sum.\n"
    '    """\n'
    "    return a + b\n"
)


@whole_session
@pytest.mark.parametrize("quoted", ["the request", "the code"])
async def test_a_plan_reply_quoting_the_request_or_the_code_is_not_an_echo(
    make_repo, scripted_server, quoted: str
) -> None:
    """A plan reply that first quotes what the human pasted, or the function it builds on, is
    a plan: it was stopped as "repeated the prompt back", and the session ended unusable."""
    repo = make_repo({**SAMPLE_FILES, "calc.py": DOCUMENTED})
    request = f"add sub to calc.py; the sub I had failed with:\n{PASTED}"
    quote = PASTED if quoted == "the request" else DOCUMENTED
    plan = f"You showed:\n\n```\n{quote}```\n\nSo the plan:\n\n" + plan_reply("Add sub")
    scripted_server.script(Reply(text=plan), Reply(text=SUB))
    result, seen = await run_headless(repo, request, scripted_server.base_url)
    assert result.exit_code == 0, result.message
    assert git(repo, "log", "--format=%s").splitlines()[0].endswith("Add sub")
    assert not seen.of(ev.ModelCallFailed)


@whole_session
async def test_a_plan_the_human_pasted_and_the_model_kept_is_not_an_echo(
    make_repo, scripted_server
) -> None:
    """A request that brings its own plan (from another tool, say) in the plan's JSON shape,
    sent back as it was: it is the plan, not the prompt's example copied."""
    repo = make_repo()
    step = {
        "title": "Add sub",
        "description": "sub(a, b) returns a minus b",
        "verify": "pytest tests/test_calc.py",
    }
    pasted = "```json\n" + json.dumps({"steps": [step]}, indent=2) + "\n```\n"
    scripted_server.script(Reply(text=pasted), Reply(text=SUB))
    request = "add sub, following this plan:\n" + pasted
    result, seen = await run_headless(repo, request, scripted_server.base_url)
    assert result.exit_code == 0, result.message
    assert git(repo, "log", "--format=%s").splitlines()[0].endswith("Add sub")
    assert not seen.of(ev.ModelCallFailed)
