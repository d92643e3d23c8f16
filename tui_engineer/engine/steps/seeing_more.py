"""The SHOW round trip: a reply that only asks to see more (no edits, no sandbox actions) is
answered with the lines (context/show.py) and the model is asked again, at most
`show_rounds` times per reply. Each answer fits what the context window has room for."""

from __future__ import annotations

import asyncio

from tui_engineer.context.show import answer_show, parse_show_requests
from tui_engineer.edits import EditError, parse_edits
from tui_engineer.edits.actions import parse_actions
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.edit_watch import expect_for

ANSWER_OVERHEAD = 200  # tokens for the answer's own words around the lines
# Code runs denser than the usual 4 characters per token (gemma3: 3.5, dense lines 2.3): an
# answer sized at 3 leaves the window a margin (the client measures the real prompt).
SAFE_CHARS_PER_TOKEN = 3
SMALLEST_REPLY = 256  # tokens kept free for the reply when the reply cap is above the window


def _only_asks(reply: str) -> bool:
    """True when the reply holds SHOW lines and nothing to apply."""
    if not parse_show_requests(reply):
        return False
    try:
        return not parse_edits(reply) and not parse_actions(reply)
    except EditError:
        return False  # a broken edit: the apply step tells the model what is wrong


def answer_room(rt: Runtime, messages: list[prompts.Message], purpose: str) -> int:
    """Characters an answer may hold: the context budget, and no more than the window leaves
    after the conversation and room for the reply."""
    room = rt.context_chars
    window = getattr(rt.model, "context_window", None)
    if isinstance(window, int) and window > 0:
        reply = min(rt.options.reply_limit(purpose), max(SMALLEST_REPLY, window // 4))
        chars = sum(len(str(m.get("content", ""))) for m in messages)
        used = chars // SAFE_CHARS_PER_TOKEN + 1
        room = min(room, max(0, window - used - reply - ANSWER_OVERHEAD) * SAFE_CHARS_PER_TOKEN)
    return room


async def reply_after_show(
    rt: Runtime, messages: list[prompts.Message], purpose: str, step: int, attempt: int
) -> str:
    """The model's reply for `purpose`, after answering up to `show_rounds` SHOW rounds. A
    reply with no edit in sight is stopped early (OffTrackReply, engine/steps/edit_watch.py)."""
    expect = expect_for(purpose)
    reply = await rt.call_model(messages, purpose, step, expect=expect)
    rounds = rt.options.show_rounds
    for round_no in range(1, rounds + 1):
        if not _only_asks(reply):
            break
        requests = parse_show_requests(reply)
        messages.append({"role": "assistant", "content": reply})
        answer = await asyncio.to_thread(
            answer_show,
            rt.workdir,
            requests,
            max_lines=rt.options.show_lines,
            max_chars=answer_room(rt, messages, purpose),
        )
        rt.emit(
            ev.ShowRequested(
                step=step,
                attempt=attempt,
                round=round_no,
                max_rounds=rounds,
                asked=tuple(r.label for r in requests),
                shown=tuple(answer.shown),
                refused=tuple(answer.refused),
                lines=answer.lines,
            )
        )
        messages.append(prompts.show_answer_message(answer.text, round_no, rounds))
        reply = await rt.call_model(messages, purpose, step, expect=expect)
    return reply
