"""A reply's NOT THIS STEP'S lines (edits/disown.py), taken: the old failures the model says
its step's change runs through but are not the step's to fix. Only a test that failed on the
starting commit can be set aside; the step is judged without it from then on (engine/runtime.py
`judge_reach`), and the human sees it with the model's reason."""

from __future__ import annotations

from tui_engineer.edits import parse_edits
from tui_engineer.edits.actions import parse_actions
from tui_engineer.edits.disown import parse_disowned
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.prompts import Message
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.reach import disowned_notice
from tui_engineer.verify import TestReport


async def disowns_only(
    rt: Runtime,
    step: int,
    messages: list[Message],
    report: TestReport | None,
    reply: str,
    unanswered: list[str],
) -> bool:
    """Take the reply's NOT THIS STEP'S lines (edits/disown.py). True when that is all it says
    (no edit, no action) after a test run: the last run is judged again without them. Claims
    refused beside an edit go in `unanswered`: the next fix request says why (refused_note)."""
    claims = parse_disowned(reply)
    if not claims:
        return False
    baseline = rt.known_baseline()
    start = set(baseline.failing) if baseline is not None else set()
    taken = {i: why for i, why in claims.items() if i in start}
    if taken:
        rt.disowned.setdefault(step, {}).update(taken)
        for test_id, why in taken.items():
            rt.emit(ev.Notice(message=disowned_notice(step, test_id, why)))
    refused = [i for i in claims if i not in start]
    only = report is not None and not parse_edits(reply) and not parse_actions(reply)
    if not only:
        unanswered.extend(refused)
        return False  # _apply takes the edits; the claims count from their test run on
    messages.append({"role": "assistant", "content": reply})
    if refused:
        messages.append(prompts.not_disowned_message(refused))
    await rt.judge_reach(step, report, tuple(start))
    return True


def refused_note(unanswered: list[str], report: TestReport) -> str:
    """Why the claims refused beside an edit were not taken, for those still failing (and
    forgets them): appended to the next fix request's report."""
    failing = {f.test_id for f in report.failures}
    still = [i for i in dict.fromkeys(unanswered) if i in failing]
    unanswered.clear()
    return "\n\n" + str(prompts.not_disowned_message(still)["content"]) if still else ""
