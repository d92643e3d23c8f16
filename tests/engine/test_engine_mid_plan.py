"""The engine mid-plan with a real model's timing: undo while the next step is reviewed, a model
server that drops and comes back, steps planned from the human's words."""

from __future__ import annotations

import asyncio
import io

import pytest

from tests.conftest import git
from tests.engine_support import DIV, MUL, SUB, StepReviewer, edit, plan_reply, run_headless
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tests.timing_support import hold_step_1, titles
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.headless.printer import ProgressPrinter

pytestmark = pytest.mark.usefixtures("api_key")


class Reviewer(StepReviewer):
    """Answers reviews from a list, and "what is still wrong?" from another."""

    def __init__(self, decisions: list[Decision], answers: list[str] = ()) -> None:
        self.decisions = list(decisions)
        self.answers = list(answers)

    async def review(self, proposal):
        return self.decisions.pop(0)

    async def still_wrong(self):
        return self.answers.pop(0) if self.answers else None


@whole_session
async def test_a_step_planned_from_the_humans_words_is_titled_from_them(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=SUB),
        Reply(text="I am not sure what to plan."),  # no usable plan, twice: one step
        Reply(text="Still no plan."),
        Reply(text=DIV),
    )
    reviewer = Reviewer([Decision.accept(), Decision.accept()], ["no way to divide"])
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=reviewer, plan=False
    )
    assert titles(repo) == ["no way to divide", "add sub", "initial"]
    steps = seen.of(ev.PlanReady)[-1].steps
    assert steps[-1].title == "no way to divide"
    assert steps[-1].asked == "no way to divide"
    assert result.exit_code == 0


@whole_session
async def test_undo_while_the_next_step_is_reviewed_takes_back_the_last_commit(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    # Step 2 is prepared ahead on step 1's proposal, then proposed again after the undo.
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL),
        Reply(text=MUL),
    )
    reviewer = Reviewer([Decision.accept(), Decision("undo"), Decision.accept()])
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=reviewer, pipeline=True
    )
    assert titles(repo) == ["Add mul", "initial"]
    calc = (repo / "calc.py").read_text()
    assert "def mul" in calc and "def sub" not in calc
    assert [e.step for e in seen.of(ev.StepUndone)] == [1]
    # The proposal under review was built on the undone step: step 2 was proposed again.
    assert [e.step for e in seen.of(ev.ProposalReady)] == [1, 2, 2]
    assert result.commits == [git(repo, "rev-parse", "HEAD")]
    assert result.exit_code == 1  # a step of the plan was taken back
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_an_undo_refused_during_a_review_keeps_that_review(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=MUL)
    )

    class EditsThenUndoes(Reviewer):
        async def review(self, proposal):
            if proposal.step.index == 2 and self.decisions[0].kind == "undo":
                # The human edited the accepted file since: undo would lose that.
                (repo / "calc.py").write_text((repo / "calc.py").read_text() + "# mine\n")
            return await super().review(proposal)

    stop = Decision("stop", "enough")
    reviewer = EditsThenUndoes([Decision.accept(), Decision("undo"), stop])
    result, seen = await run_headless(
        repo, "add sub and mul", scripted_server.base_url, reviewer=reviewer
    )
    refused = seen.of(ev.UndoRefused)
    assert len(refused) == 1 and "calc.py" in refused[0].message
    assert not seen.of(ev.StepUndone)
    assert [e.step for e in seen.of(ev.ProposalReady)] == [1, 2]  # the same review, asked again
    assert "# mine" in (repo / "calc.py").read_text()
    assert titles(repo) == ["Add sub", "initial"] and result.outcome == "stopped"


async def _until(condition, timeout: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {condition}")
        await asyncio.sleep(0.05)


@whole_session
async def test_a_server_dropped_mid_step_pauses_and_resumes_when_it_is_back(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    seen: list[ev.Event] = []
    reviewer = Reviewer([Decision.accept(), Decision.accept()])
    session = asyncio.ensure_future(
        run_headless(
            repo, "add sub and mul", scripted_server.base_url, reviewer=reviewer,
            sink=seen.append, server_wait=120,
        )
    )  # fmt: skip
    await gate.arrived()
    scripted_server.stop()  # the model server dies while step 1's reply is on its way
    await _until(lambda: any(isinstance(e, ev.ServerPaused) for e in seen))
    assert not session.done()
    paused = next(e for e in seen if isinstance(e, ev.ServerPaused))
    assert paused.step == 1 and paused.wait == 120
    # It answered a moment ago: the address is right, so no advice to set it.
    assert "stopped answering during step 1's propose call" in paused.message, paused.message
    assert "--base-url" not in paused.message and "OPENAI_BASE_URL" not in paused.message
    scripted_server.script(Reply(text=SUB), Reply(text=MUL))
    scripted_server.start()  # restarted on the same port
    result, _ = await asyncio.wait_for(session, 120)
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
    assert any(isinstance(e, ev.ServerResumed) for e in seen)
    assert not any(isinstance(e, ev.ErrorEvent) for e in seen)
    assert result.exit_code == 0


@whole_session
async def test_headless_gives_up_after_server_wait_naming_the_steps_left(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    gate = hold_step_1(scripted_server)
    seen: list[ev.Event] = []
    out = io.StringIO()
    printer = ProgressPrinter(out)

    def sink(event: ev.Event) -> None:
        seen.append(event)
        printer(event)

    session = asyncio.ensure_future(
        run_headless(
            repo, "add sub and mul", scripted_server.base_url, reviewer=Reviewer([]),
            sink=sink, server_wait=1,
        )
    )  # fmt: skip
    await gate.arrived()
    scripted_server.stop()
    result, _ = await asyncio.wait_for(session, 120)
    assert result.outcome == "error"
    assert "1 s" in result.message and "server_wait" in result.message
    assert "1. Add sub" in result.message and "2. Add mul" in result.message
    assert "--base-url" not in result.message, result.message
    assert any(isinstance(e, ev.ServerPaused) for e in seen)
    assert "paused, the plan kept" in out.getvalue() and "up to 1 s" in out.getvalue()
    assert titles(repo) == ["initial"]


NEG = edit("calc.py", "def add(a, b):\n", "def neg(a):\n    return -a\n\n\ndef add(a, b):\n")
EDITS = {"Add sub": SUB, "Add mul": MUL, "Add neg": NEG}


def by_step(request) -> Reply:
    """The model's reply for whichever step a propose call asks for (calls of the step prepared
    ahead arrive in any order)."""
    text = "\n".join(str(m.get("content", "")) for m in request.messages)
    asked = text.split("Now do step ", 1)[-1].split("\n", 1)[0]  # "2: Add mul"
    for title, reply in EDITS.items():
        if "Now do step " in text and asked.endswith(title):
            return Reply(text=reply)
    return Reply(text=plan_reply(*EDITS))


@whole_session
async def test_undo_during_a_review_drops_the_step_prepared_ahead_on_it(
    make_repo, scripted_server
) -> None:
    repo = make_repo()
    scripted_server.script(*[by_step] * 12)
    reviewer = Reviewer([Decision.accept(), Decision("undo"), Decision.accept(), Decision.accept()])
    result, seen = await run_headless(
        repo, "add sub, mul and neg", scripted_server.base_url, reviewer=reviewer, pipeline=True
    )
    assert titles(repo) == ["Add neg", "Add mul", "initial"]
    calc = (repo / "calc.py").read_text()
    assert "def sub" not in calc and "def mul" in calc and "def neg" in calc
    assert [e.step for e in seen.of(ev.ProposalReady)] == [1, 2, 2, 3]
    assert git(repo, "status", "--porcelain") == ""
    assert result.outcome == "done"


@whole_session
async def test_chat_calls_that_hang_while_the_model_list_answers_stop_the_session(
    make_repo, scripted_server
) -> None:
    """GET /models answers, so every pause ended at once ('answers again after 2 s') and the
    same call hung again, for ever. Now the call's third failure stops the session with why."""
    repo = make_repo()
    hung = [Reply(text="", stall="keep-alive")] * 12  # live, no text: idle after 0.3 s
    scripted_server.script(Reply(text=plan_reply("Add sub", "Add mul")), *hung)
    seen: list[ev.Event] = []
    result, _ = await asyncio.wait_for(
        run_headless(
            repo, "add sub and mul", scripted_server.base_url, reviewer=Reviewer([]),
            sink=seen.append, server_wait=60, stream_idle_timeout=0.3,
        ),
        60,
    )  # fmt: skip
    assert result.outcome == "error"
    assert "answers again each time" in result.message, result.message
    assert "step 1's propose call failed 3 times in a row" in result.message
    assert "sent no text for 0.3 s" in result.message
    assert "1. Add sub" in result.message and "2. Add mul" in result.message
    assert sum(isinstance(e, ev.ServerResumed) for e in seen) == 2
    assert titles(repo) == ["initial"]
