"""A reply that plainly is not what was asked is stopped early (issue 21 §3): a small local model
asked for a plan streamed 19,000 tokens of anything else. Real openai client, real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.scripted_server import Reply
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tui_engineer.llm import ModelClient
from tui_engineer.llm.reply_watch import Expected, OffTrackReply

ASK = [{"role": "user", "content": "Plan the work as one json block."}]
PLAN = Expected("a plan", ('"steps"', "```json"), within_tokens=50)
PLAN_WITHIN_500 = Expected("a plan", ('"steps"', "```json"), within_tokens=500)
RAMBLE = "def f(x):\n    return x + 1\n" * 400  # ~2,800 tokens of something else
A_PLAN = '```json\n{"steps": [{"title": "Add sub"}]}\n```'


@pytest.fixture
async def client(scripted_server) -> AsyncIterator[ModelClient]:
    made = ModelClient(model="tiny", base_url=scripted_server.base_url, api_key="k", max_retries=0)
    yield made
    await made.aclose()


async def test_a_reply_with_no_plan_is_stopped_after_its_bound(scripted_server, client):
    scripted_server.script(Reply(text=RAMBLE))
    shown: list[str] = []
    with pytest.raises(OffTrackReply, match="was not a plan: 5\\d tokens in") as err:
        await client.complete(ASK, expect=PLAN, on_text=shown.append, max_output_tokens=4000)
    assert len("".join(shown)) < 60 * 4 + 64  # stopped near 50 tokens, not 2,800
    assert 'it began: "def f(x): return x + 1' in str(err.value)
    assert client.ledger.completion_tokens >= 50  # what it did write is counted
    assert len(scripted_server.chat_requests) == 1  # not retried, not continued


async def test_a_plan_after_some_words_is_not_stopped(scripted_server, client):
    scripted_server.script(Reply(text="Sure, here is the plan for it. " * 3 + A_PLAN))
    done = await client.complete(ASK, expect=PLAN)
    assert done.text.endswith(A_PLAN)


async def test_thinking_before_the_plan_does_not_count(scripted_server, client):
    thought = "<think>" + "Let me look at calc.py first. " * 60 + "</think>\n"  # ~450 tokens
    scripted_server.script(Reply(text=thought + A_PLAN))
    done = await client.complete(ASK, expect=PLAN)
    assert done.text.endswith(A_PLAN)


async def test_once_the_plan_showed_the_reply_runs_to_its_end(scripted_server, client):
    long_plan = A_PLAN + "\nNotes: " + "more words here " * 200
    scripted_server.script(Reply(text=long_plan))
    done = await client.complete(ASK, expect=PLAN)
    assert done.text == long_plan


async def test_a_reply_rambling_in_long_runs_of_spaces_is_stopped_as_soon(scripted_server, client):
    """gemma3-270m rambled in pieces of ~10 characters: its tokens are counted by length too."""
    scripted_server.script(Reply(chunks=[" " * 40] * 400))
    with pytest.raises(OffTrackReply):
        await client.complete(ASK, expect=PLAN, max_output_tokens=4000)
    assert client.ledger.completion_tokens < 100


PROMPT = (
    "Request from the human:\nadd a sub function\n\nFiles in the repository:\n"
    "calc.py (2 lines) — changed recently\n\nReply with the plan as one ```json block:\n"
    '```json\n{"steps": [{"title": "short imperative title",\n'
    '  "description": "what changes and why",\n  "depends_on": []}]}\n```\n'
)


async def test_a_reply_repeating_the_prompt_back_is_stopped_though_it_holds_the_signs(
    scripted_server, client
):
    """gemma3-270m, a base model, answered the plan request by copying it, example plan and
    all, until the window was full: the signs of a plan were there, the plan was not."""
    scripted_server.script(Reply(text=PROMPT * 30))
    ask = [{"role": "user", "content": PROMPT}]
    with pytest.raises(OffTrackReply, match="it repeated the prompt back") as err:
        await client.complete(ask, expect=PLAN, max_output_tokens=4000)
    assert err.value.tokens < 100
    assert client.ledger.completion_tokens < 100


async def test_a_real_plan_in_the_prompts_format_is_not_an_echo(scripted_server, client):
    plan = (
        "Here is the plan.\n```json\n"
        '{"steps": [{"title": "Add sub to calc.py",\n'
        '  "description": "sub(a, b) returns a - b, with a test",\n'
        '  "files": ["calc.py", "tests/test_calc.py"],\n'
        '  "depends_on": []}]}\n```\n'
    )
    scripted_server.script(Reply(text=plan))
    done = await client.complete([{"role": "user", "content": PROMPT}], expect=PLAN)
    assert done.text == plan


async def test_a_reply_looping_on_its_own_lines_is_stopped_before_its_bound(
    scripted_server, client
):
    """gemma3-270m under llama-2's chat format wrote its own distorted copy of the file listing
    again and again: no line of it the prompt's, every few lines the same as before."""
    lines = ["test/test_calc.py (4 lines) — changed recently", "Files in the repository:"]
    loop = "".join(f"{lines[0]}\n  {n}: def test_add()\n{lines[1]}\n" for n in range(300))
    scripted_server.script(Reply(text=loop))
    with pytest.raises(OffTrackReply, match="tokens in, it kept repeating itself") as err:
        await client.complete(ASK, expect=PLAN_WITHIN_500, max_output_tokens=4000)
    assert err.value.tokens < 150  # long before the 500-token bound


async def test_code_that_repeats_lines_after_the_sign_is_not_a_loop(scripted_server, client):
    reply = A_PLAN + "\n" + "assert add(2, 3) == 5\n" * 40
    scripted_server.script(Reply(text=reply))
    done = await client.complete(ASK, expect=PLAN_WITHIN_500)
    assert done.text == reply


FENCED_PLAN = Expected(
    "a plan",
    (),
    within_tokens=200,
    sign_line=r"^```json",
    closed_by=r"^```$",
    tail_tokens=100,
)
TALK = "".join(f"Note {n}: sub could take a third argument later on.\n" for n in range(400))


async def test_a_reply_is_whole_once_its_block_closed_and_talk_followed(scripted_server, client):
    scripted_server.script(Reply(text=A_PLAN + "\n" + TALK))
    done = await client.complete(ASK, expect=FENCED_PLAN, max_output_tokens=8000)
    assert done.finish_reason == "complete"
    assert done.text.startswith(A_PLAN)
    assert 100 * 4 <= len(done.text) - len(A_PLAN) < 100 * 4 + 200  # the tail, then no more


async def test_a_second_block_within_the_tail_is_waited_for(scripted_server, client):
    """A model that revises its plan after a few words: the last block counts (parse_plan)."""
    revised = A_PLAN.replace("Add sub", "Add sub and its test")
    reply = A_PLAN + "\nOn second thought, with its test:\n" + revised + "\nDone."
    scripted_server.script(Reply(text=reply))
    done = await client.complete(ASK, expect=FENCED_PLAN)
    assert done.text == reply and done.finish_reason == "stop"


async def test_a_block_copied_from_the_prompt_is_stopped_where_it_closes(scripted_server, client):
    example = PROMPT[PROMPT.index("```json\n{") :]
    copied = "Sure, test-second steps are the ones that matter most here.\n" + example
    scripted_server.script(Reply(text=copied + TALK))
    with pytest.raises(OffTrackReply, match="it repeated the prompt back") as err:
        await client.complete(
            [{"role": "user", "content": PROMPT}], expect=FENCED_PLAN, max_output_tokens=8000
        )
    assert err.value.partial.startswith(copied) and err.value.tokens < 100
