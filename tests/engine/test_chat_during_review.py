"""A chat message sent while step 1 is reviewed and step 2 is prepared ahead (issue 37 §1): one
about step 1 never costs step 2 a fresh call at the accept; one that names step 2 prepares it
again when it is sent, not at the accept. Real sessions, real git, real pytest, the scripted
model over HTTP holding replies at gates like a model that takes its time."""

from __future__ import annotations

import asyncio

import pytest

from tests.engine_support import DIV, MUL_ON_SUB, SUB, StepReviewer, plan_reply, run_headless
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import REACHED, titles
from tui_engineer.engine import events as ev
from tui_engineer.engine.inbox import Inbox
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.chat_target import about_step_ahead
from tui_engineer.engine.reviews.review import Decision

PLAN = plan_reply("Add sub", "Add mul", "Add div")


pytestmark = pytest.mark.usefixtures("api_key")


class ChattyReviewer(StepReviewer):
    """Reads step 1 until step 2 is ready, sends `message` in the chat, waits for `before`
    (something that must happen before the accept), then accepts; later steps at once."""

    def __init__(self, inbox: Inbox, message: str, before: Gate | None = None) -> None:
        self.inbox, self.message, self.before = inbox, message, before
        self.ready = asyncio.Event()
        self.shown: list[str] = []
        self.accepted_at = 0.0

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready and event.step == 2:
            self.ready.set()

    async def review(self, proposal) -> Decision:
        self.shown.append(proposal.diff)
        if len(self.shown) == 1:
            await asyncio.wait_for(self.ready.wait(), REACHED)
            self.inbox.put_nowait(self.message)
            if self.before is not None:
                await self.before.arrived()
                self.before.open()
            self.accepted_at = asyncio.get_running_loop().time()
        return Decision.accept()


async def chatting(repo, server: ScriptedServer, request: str, reviewer: ChattyReviewer):
    """The session asked `request`, the next step prepared during review, `reviewer` hearing
    every event and its chat messages reaching the session; it must end well."""
    result, seen = await run_headless(
        repo, request, server.base_url, reviewer=reviewer, sink=reviewer.sink,
        inbox=reviewer.inbox, pipeline=True,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    return seen


def propose_calls(seen, step: int) -> list[ev.ModelExchange]:
    return [e for e in seen.of(ev.ModelExchange) if e.step == step and e.purpose == "propose"]


@whole_session
async def test_a_message_about_the_step_under_review_leaves_the_prepared_step_alone(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    step_3 = Gate()  # step 3's call waits (prepared while step 2 is reviewed) until opened
    scripted_server.script(
        Reply(text=PLAN), Reply(text=SUB), Reply(text=MUL_ON_SUB), Reply(text=DIV, hold=step_3)
    )
    reviewer = ChattyReviewer(Inbox(), "please give sub a docstring")

    async def open_step_3() -> None:
        await step_3.arrived()
        step_3.open()

    opener = asyncio.ensure_future(open_step_3())
    seen = await chatting(repo, scripted_server, "add sub, mul and div", reviewer)
    await opener

    # Step 2's prepared proposal was the one reviewed: one call for it, made before the accept.
    assert len(propose_calls(seen, 2)) == 1
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [(2, True), (3, True)]
    assert seen.of(ev.NextStepRestarted) == []
    assert "+def mul" in reviewer.shown[1]
    assert titles(repo) == ["Add div", "Add mul", "Add sub", "initial"]
    # About step 1, accepted before a call took it: no later call came, so it is said unsent.
    assert [e.texts for e in seen.of(ev.FeedbackPending)] == [("please give sub a docstring",)]


@whole_session
async def test_a_message_naming_the_prepared_step_prepares_it_again_when_it_is_sent(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    again = Gate()  # step 2's second call: it must reach the model while step 1 is reviewed
    scripted_server.script(
        Reply(text=PLAN), Reply(text=SUB), Reply(text=MUL_ON_SUB),
        Reply(text=MUL_ON_SUB, hold=again), Reply(text=DIV),
    )  # fmt: skip
    reviewer = ChattyReviewer(Inbox(), "for mul, keep it on one line", before=again)
    seen = await chatting(repo, scripted_server, "add sub, mul and div", reviewer)

    assert [e.step for e in seen.of(ev.NextStepRestarted)] == [2]
    first, second = propose_calls(seen, 2)
    assert "keep it on one line" not in str(first.messages)
    assert "keep it on one line" in str(second.messages)
    # Asked again before the accept (the reviewer accepted once the call reached the model),
    # and nothing more at the accept: the restarted preparation was the one reviewed.
    assert len(scripted_server.chat_requests) == 5
    assert [(d.step, d.purpose) for d in seen.of(ev.FeedbackDelivered)] == [(2, "propose")]
    assert seen.of(ev.FeedbackPending) == []
    assert titles(repo) == ["Add div", "Add mul", "Add sub", "initial"]


@pytest.mark.parametrize(
    ("text", "ahead"),
    [
        ("please give sub a docstring", False),
        ("looks fine, but rename the variable", False),
        ("for mul, keep it on one line", True),
        ("in step 2 use a loop", True),
        ("STEP #2: no recursion", True),
        ("step 1 needs a docstring, mul can wait", False),
        ("mul.py should stay small", True),
        ("calc.py is getting long", False),
    ],
)
def test_which_step_a_message_is_about(text: str, ahead: bool) -> None:
    current = Step(1, "Add sub", files=["calc.py"])
    prepared = Step(2, "Add mul", files=["calc.py", "mul.py"])
    assert about_step_ahead(text, current, prepared) is ahead


class RejectsFirst(ChattyReviewer):
    """Sends `message` once step 2 is prepared, waits for its new call, then rejects step 1
    once; accepts everything after."""

    async def review(self, proposal) -> Decision:
        decision = await super().review(proposal)
        return Decision.reject("write it as -(b - a)") if len(self.shown) == 1 else decision


@whole_session
async def test_a_message_for_the_prepared_step_survives_a_reject_of_the_step_before(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    again = Gate()
    sub_again = SUB.replace("a - b", "-(b - a)")
    mul_again = MUL_ON_SUB.replace("return a - b", "return -(b - a)")
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=MUL_ON_SUB),
        Reply(text=MUL_ON_SUB, hold=again), Reply(text=sub_again), Reply(text=mul_again),
    )  # fmt: skip
    reviewer = RejectsFirst(Inbox(), "for mul, keep it on one line", before=again)
    seen = await chatting(repo, scripted_server, "add sub and mul", reviewer)

    step_1 = [e for e in seen.of(ev.ModelExchange) if e.step == 1]
    assert all("keep it on one line" not in str(e.messages) for e in step_1)
    # Step 2's preparation on the new step 1 had it again; it was delivered with step 2.
    last_2 = propose_calls(seen, 2)[-1]
    assert "keep it on one line" in str(last_2.messages)
    assert [d.step for d in seen.of(ev.FeedbackDelivered)] == [2]
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
