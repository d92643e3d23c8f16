"""The plan stays right (issue 35): with `plan_check` on, a short model call asked while a step
is reviewed finds the steps its accept makes unnecessary; such a step is shown as a drop to
accept, never dropped silently. Real sessions and git, real pytest, the scripted model."""

from __future__ import annotations

import asyncio

import pytest

from tests.engine_support import DIV, MUL_ON_SUB, SUB, StepReviewer, plan_reply, run_headless
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.timing_support import titles
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision

pytestmark = pytest.mark.usefixtures("api_key")

# Step 1 does more than asked: it adds sub and mul, so step 2 ("Add mul") is no longer needed.
SUB_AND_MUL = SUB + MUL_ON_SUB
DROP_2 = "DROP 2: step 1 already adds mul"


class ReadsUntilChecked(StepReviewer):
    """Reads step 1 until the plan check answered (as a human reads for a while), then gives
    its decisions in turn; records what each review showed."""

    def __init__(self, *decisions: Decision) -> None:
        self.decisions = list(decisions)
        self.checked = asyncio.Event()
        self.shown: list[tuple[int, str, str]] = []

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.Notice) and event.message.startswith("Plan check"):
            self.checked.set()

    async def review(self, proposal):
        self.shown.append((proposal.step.index, proposal.diff, proposal.summary()))
        if len(self.shown) == 1:
            await asyncio.wait_for(self.checked.wait(), 20)
        return self.decisions.pop(0) if self.decisions else Decision.accept()


def script(server, *replies: str) -> None:
    server.script(*(Reply(text=r, usage=(100, 10)) for r in replies))


@whole_session
async def test_a_step_the_first_accept_made_unnecessary_is_shown_as_a_drop(
    make_repo, scripted_server
):
    script(scripted_server, plan_reply("Add sub", "Add mul", "Add div"), SUB_AND_MUL, DROP_2, DIV)
    repo = make_repo()
    reviewer = ReadsUntilChecked()
    result, seen = await run_headless(
        repo, "add sub, mul and div", scripted_server.base_url,
        reviewer=reviewer, sink=reviewer.sink, plan_check=True,
    )  # fmt: skip
    assert result.outcome == "done", result.message
    step_2 = reviewer.shown[1]
    assert step_2[0] == 2 and step_2[1] == ""  # no change: a drop, asked, not a model's edit
    assert "no longer needed, says the plan check (step 1 already adds mul)" in step_2[2]
    skipped = {e.step: e.reason for e in seen.of(ev.StepSkipped)}
    assert "no longer needed (step 1 already adds mul)" in skipped[2]
    assert titles(repo)[:2] == ["Add div", "Add sub"]
    # plan, step 1, the check (during step 1's review), step 3: nothing asked for step 2,
    # and no check at step 3's review (nothing left after it).
    purposes = [e.purpose for e in seen.of(ev.ModelCallStarted)]
    assert purposes == ["plan", "propose", "check", "propose"]


@whole_session
async def test_a_drop_rejected_with_a_reason_is_proposed_as_usual(make_repo, scripted_server):
    """The check can be wrong: step 1 added only sub. Rejecting the drop, with why, has the
    step proposed by the model, the reason with it."""
    script(scripted_server, plan_reply("Add sub", "Add mul"), SUB, DROP_2, MUL_ON_SUB)
    repo = make_repo()
    reviewer = ReadsUntilChecked(Decision.accept(), Decision.reject("mul is not in yet"))
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url,
        reviewer=reviewer, sink=reviewer.sink, plan_check=True,
    )  # fmt: skip
    assert result.outcome == "done", result.message
    assert titles(repo)[:2] == ["Add mul", "Add sub"]
    assert "mul is not in yet" in str(scripted_server.chat_requests[-1].messages)


@whole_session
async def test_auto_mode_drops_the_step_and_says_so(make_repo, scripted_server):
    script(scripted_server, plan_reply("Add sub", "Add mul", "Add div"), SUB_AND_MUL, DROP_2, DIV)
    repo = make_repo()
    reviewer = ReadsUntilChecked()
    result, seen = await run_headless(
        repo, "add sub, mul and div", scripted_server.base_url,
        reviewer=reviewer, sink=reviewer.sink, plan_check=True, approval="auto",
    )  # fmt: skip
    assert result.outcome == "done", result.message
    made = [(e.step, e.decision, e.by) for e in seen.of(ev.DecisionMade)]
    assert (2, "accept", "auto") in [(s, d, b.split(" ")[0]) for s, d, b in made]
    assert 2 not in [index for index, _, _ in reviewer.shown]


@whole_session
async def test_a_dropped_step_prepared_side_by_side_frees_its_place(make_repo, scripted_server):
    """With steps prepared side by side, the step the check drops was being prepared too: the
    drop throws that preparation away (its shadow removed), and the other steps go on."""
    from tests.engine.test_parallel_steps import (
        DIV_MODULE,
        DIV_STEP,
        MUL_MODULE,
        MUL_STEP,
        SUB_STEP,
        ByStep,
        Reader,
        shadows_left,
    )  # fmt: skip

    repo = make_repo()
    script = ByStep(
        scripted_server,
        [SUB_STEP, MUL_STEP, DIV_STEP],
        # The check's answer is the model's judgement: what step 1 really did is not looked at.
        step1=[Reply(text=SUB)],
        step2=[Reply(text=MUL_MODULE)],
        step3=[Reply(text=DIV_MODULE)],
    )
    script.planned.append(Reply(text=DROP_2))  # the check names no step: served after the plan
    scripted_server.script(script.answer)
    checked = asyncio.Event()

    def sink(event: ev.Event) -> None:
        reader.sink(event)
        if isinstance(event, ev.Notice) and event.message.startswith("Plan check"):
            checked.set()

    reader = Reader(before={1: checked.wait})
    result, seen = await run_headless(
        repo, "add sub, mul and div", scripted_server.base_url, reviewer=reader, sink=sink,
        pipeline=True, parallel_steps=3, plan_check=True,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert titles(repo) == ["Add div", "Add sub", "initial"]
    assert reader.shown[1] == ""  # step 2: the drop, reviewed
    # Its preparation went at the drop, before step 3 was shown, not at the session's end.
    events = seen.events
    gone = next(i for i, e in enumerate(events) if isinstance(e, ev.NextStepPrepared)
                and e.step == 2 and not e.ready)  # fmt: skip
    shown_3 = next(i for i, e in enumerate(events) if isinstance(e, ev.ProposalReady)
                   and e.step == 3)  # fmt: skip
    assert gone < shown_3
    assert shadows_left(repo) == []
