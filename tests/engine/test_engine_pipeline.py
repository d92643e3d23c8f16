"""The next step prepared during review, end to end: real sessions, real git worktrees, real
pytest runs, the scripted model over HTTP, and a reviewer that takes its time like a human."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.conftest import git
from tests.engine_support import (
    MUL_ON_SUB,
    SUB,
    StepReviewer,
    edit,
    plan_reply,
    run_headless,
    shadows_left,
)
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.engine.inbox import Inbox
from tui_engineer.engine.reviews.review import Decision

SUB_AGAIN = SUB.replace("a - b", "-(b - a)")
MUL_ON_SUB_AGAIN = edit(
    "calc.py",
    "    return -(b - a)\n",
    "    return -(b - a)\n\n\ndef mul(a, b):\n    return a * b\n",
)


pytestmark = pytest.mark.usefixtures("api_key")


class SlowReviewer(StepReviewer):
    """Decides each of the first `waits` reviews only once the next step was prepared, like a
    human who reads for a while; later ones at once."""

    def __init__(self, *decisions: Decision, waits: int) -> None:
        self.decisions = list(decisions)
        self.prepared = asyncio.Event()
        self.shown: list[str] = []
        self.waits = waits

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready:
            self.prepared.set()

    async def review(self, proposal):
        self.shown.append(proposal.diff)
        if len(self.shown) <= self.waits:
            await asyncio.wait_for(self.prepared.wait(), 20)
        self.prepared.clear()
        return self.decisions.pop(0) if self.decisions else Decision.accept()


async def pipelined(
    repo, server: ScriptedServer, reviewer: SlowReviewer, request: str = "add sub and mul", **flags
):
    """The session asked `request` with the next step prepared during review; `reviewer` hears
    every event (it waits for the step prepared) unless the test gives its own `sink`."""
    flags.setdefault("sink", reviewer.sink)
    return await run_headless(
        repo, request, server.base_url, reviewer=reviewer, pipeline=True, **flags
    )


async def run(repo, server: ScriptedServer, reviewer: SlowReviewer, *replies: str, **flags):
    server.script(*(Reply(text=r, usage=(100, 10)) for r in replies))
    return await pipelined(repo, server, reviewer, **flags)


def parent_of(repo, sha: str) -> str:
    return git(repo, "rev-parse", f"{sha}^")


@whole_session
async def test_the_next_step_is_ready_at_accept_and_committed_on_top_of_the_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    reviewer = SlowReviewer(waits=1)
    plan = plan_reply("Add sub", "Add mul")
    result, seen = await run(repo, scripted_server, reviewer, plan, SUB, MUL_ON_SUB)

    assert result.exit_code == 0, result.message
    # Step 2's proposal call happened while step 1 was still under review.
    order = [
        ("call", e.step) if isinstance(e, ev.ModelExchange) else ("decided", e.step)
        for e in seen.events
        if isinstance(e, ev.ModelExchange | ev.DecisionMade)
    ]
    assert order.index(("call", 2)) < order.index(("decided", 1))
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [(2, True)]
    # Recorded at once, as the background's (no UI shows it as the reply under review).
    assert [e.background for e in seen.of(ev.ModelExchange)] == [False, False, True]
    # Reviewed and committed with the right parent: step 1's commit.
    first, second = result.commits
    assert parent_of(repo, second) == first
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert "def mul(a, b):\n    return a * b" in (repo / "calc.py").read_text()
    assert "+def mul" in reviewer.shown[1] and "+def sub" not in reviewer.shown[1]
    # Its test results were shown when its turn came, before its review.
    step2_tests = [e for e in seen.of(ev.TestsFinished) if e.step == 2]
    assert len(step2_tests) == 1 and step2_tests[0].ok
    assert shadows_left(repo) == []  # every shadow removed


@whole_session
async def test_a_rejected_step_drops_the_prepared_one_which_is_proposed_again_on_the_new_base(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    reviewer = SlowReviewer(Decision.reject("write it as -(b - a)"), waits=2)
    plan = plan_reply("Add sub", "Add mul")
    replies = (plan, SUB, MUL_ON_SUB, SUB_AGAIN, MUL_ON_SUB_AGAIN)
    result, seen = await run(repo, scripted_server, reviewer, *replies)

    assert result.exit_code == 0, result.message
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [
        (2, True),  # prepared on the first proposal of step 1
        (2, False),  # dropped when that proposal was rejected
        (2, True),  # prepared again on the accepted one
    ]
    # The second preparation was built on the new step 1: its edit needs `-(b - a)` there.
    first, second = result.commits
    assert parent_of(repo, second) == first
    assert "return -(b - a)" in (repo / "calc.py").read_text()
    assert "def mul" in (repo / "calc.py").read_text()
    assert shadows_left(repo) == []


@whole_session
async def test_budgets_count_the_calls_of_a_prepared_step_even_when_it_is_dropped(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    reviewer = SlowReviewer(Decision.reject("write it as -(b - a)"), waits=1)
    plan = plan_reply("Add sub", "Add mul")
    # The prepared step's call is expensive; then step 1 is rejected and that call dropped.
    scripted_server.script(
        Reply(text=plan, usage=(100, 10)),
        Reply(text=SUB, usage=(100, 10)),
        Reply(text=MUL_ON_SUB, usage=(5000, 0)),
        Reply(text=SUB_AGAIN, usage=(100, 10)),
    )
    # Without counting the dropped call (220 tokens used) re-proposing step 1 fits this budget;
    # counting it (5,220 used), it does not, and the call is not made.
    result, seen = await pipelined(repo, scripted_server, reviewer, max_tokens=4_500)

    assert result.outcome == "budget", result.message
    assert len(scripted_server.chat_requests) == 3
    usage = seen.of(ev.UsageUpdated)[-1]
    assert usage.prompt_tokens + usage.completion_tokens == 5_220
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]
    assert shadows_left(repo) == []


@whole_session
async def test_a_chat_message_naming_the_next_step_reaches_its_proposal(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    inbox = Inbox()

    class ChattyReviewer(SlowReviewer):
        async def review(self, proposal):
            decision = await super().review(proposal)
            if len(self.shown) == 1:  # typed while reading step 1, after step 2 was prepared
                inbox.put_nowait("for mul, please keep it on one line")
            return decision

    reviewer = ChattyReviewer(waits=1)
    scripted_server.script(
        *(Reply(text=t) for t in (plan_reply("Add sub", "Add mul"), SUB, MUL_ON_SUB, MUL_ON_SUB))
    )
    result, seen = await pipelined(repo, scripted_server, reviewer, inbox=inbox)

    assert result.exit_code == 0, result.message
    # It names step 2 ("mul"), prepared without it: prepared again with it as it was sent.
    assert [e.step for e in seen.of(ev.NextStepRestarted)] == [2]
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [(2, True), (2, True)]
    prepared, again = scripted_server.chat_requests[2], scripted_server.chat_requests[3]
    assert "keep it on one line" not in str(prepared.messages)
    assert "keep it on one line" in str(again.messages)
    assert [d.purpose for d in seen.of(ev.FeedbackDelivered)] == ["propose"]
    assert shadows_left(repo) == []


# Step 1's first try breaks its new test; the fix changes the file again. Step 2 edits a line only
# the fixed step 1 has.
SUB_BROKEN = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef sub(a, b):\n    return a + b  # x\n"
) + edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_sub():\n    from calc import sub\n"
    "    assert sub(5, 3) == 2\n",
)
SUB_FIXED = edit("calc.py", "    return a + b  # x\n", "    return a - b\n")
# Slow enough that work started at the first edits is visibly under way before they finish.
SLOW_TEST = {"tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(3)\n"}


def spy_on_test_runs(monkeypatch: pytest.MonkeyPatch, note: Callable[[str, str], object]) -> None:
    """Each test run the local sandbox starts is told to `note` first: the name of the folder
    it runs in (a prepared step's shadow has "-next" in it) and its command."""
    from tui_engineer.sandbox.local import LocalSandbox

    run_tests = LocalSandbox.run_tests

    async def spy(self, workdir, command, **kwargs):
        note(workdir.name, command)
        return await run_tests(self, workdir, command, **kwargs)

    monkeypatch.setattr(LocalSandbox, "run_tests", spy)


def by_conversation(request) -> Reply:
    """Answers by what is asked, whatever the order of calls (two steps work at once)."""
    first = str(request.messages[0].get("content", ""))
    user = str(request.messages[1].get("content", "")) if len(request.messages) > 1 else ""
    if "You diagnose" in first:
        return Reply(text="sub adds instead of subtracting.")
    if "Now do step 2" in user:
        return Reply(text=MUL_ON_SUB)
    if "Now do step 1" in user:
        return Reply(text=SUB_BROKEN if len(request.messages) == 2 else SUB_FIXED)
    return Reply(text=plan_reply("Add sub", "Add mul"))


@whole_session
async def test_the_next_step_asks_the_model_only_once_the_step_before_passed_its_tests(
    make_repo, scripted_server: ScriptedServer
) -> None:
    from tests.conftest import SAMPLE_FILES

    repo = make_repo({**SAMPLE_FILES, **SLOW_TEST})
    reviewer = SlowReviewer(waits=1)
    scripted_server.script(*[by_conversation] * 12)
    result, seen = await pipelined(repo, scripted_server, reviewer)

    assert result.exit_code == 0, result.message
    # Step 1's first try failed its tests: step 2 (whose shadow was made at those first edits)
    # asked nothing then; it was asked once, after the fixed step 1 passed (DESIGN.md
    # invariant 8: never built on a failing base).
    order = [
        ("call", e.step) if isinstance(e, ev.ModelExchange) else ("tested", e.step, e.ok)
        for e in seen.events
        if (isinstance(e, ev.ModelExchange) and e.purpose == "propose")
        or (isinstance(e, ev.TestsFinished) and e.step == 1)
    ]
    assert order == [("call", 1), ("tested", 1, False), ("tested", 1, True), ("call", 2)]
    step2_calls = [
        r for r in scripted_server.chat_requests if "Now do step 2" in str(r.messages[1:2])
    ]
    assert len(step2_calls) == 1
    assert [(e.step, e.ready) for e in seen.of(ev.NextStepPrepared)] == [(2, True)]
    first, second = result.commits
    assert parent_of(repo, second) == first
    text = (repo / "calc.py").read_text()
    assert "return a - b\n\n\ndef mul(a, b):\n    return a * b" in text and "# x" not in text
    assert shadows_left(repo) == []


@whole_session
async def test_a_prepared_step_runs_the_plain_suite_where_it_would_collect_coverage(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.engine.test_engine_selection import (
        ALPHA_CHANGE,
        BETA_CHANGE,
        FILES,
        SELECTING,
        TEST_CMD,
        runs,
    )

    repo = make_repo({**FILES, **SLOW_TEST})
    commands: list[tuple[str, str]] = []

    def answer(text: str):
        def reply(request) -> Reply:
            commands.append(("model", text[:20]))
            return Reply(text=text)

        return reply

    spy_on_test_runs(monkeypatch, lambda folder, command: commands.append((folder, command)))
    reviewer = SlowReviewer(waits=1)
    plan = plan_reply("Touch beta", "Touch alpha")
    scripted_server.script(*(answer(r) for r in (plan, BETA_CHANGE, ALPHA_CHANGE)))
    result, seen = await pipelined(repo, scripted_server, reviewer, "change things", **SELECTING)

    assert result.exit_code == 0, result.message
    # No selection data yet: step 1 runs the suite collecting coverage (2–3× slower). Step 2,
    # prepared once step 1 passed, never collects: it runs the plain suite where it would
    # have to, and here (step 1's run has collected by then) its affected tests first.
    collecting = [name for name, c in commands if "--testmon-noselect" in c and " --help " not in c]
    assert len(collecting) == 1 and "-next" not in collecting[0]
    assert runs(seen, 1) == [("full", True, 6)]
    assert runs(seen, 2)[-1] == ("full", True, 6)
    prepared = [
        c for name, c in commands if "-next" in name and " --help " not in c and name != "model"
    ]
    assert prepared[-1] == TEST_CMD and not any("--testmon-noselect" in c for c in prepared)
    # The check whether testmon is importable started with the session (beside the plan call,
    # not after step 1's edits), and ran once: the prepared step shared it.
    probes = [i for i, (_, c) in enumerate(commands) if " --help " in c]
    assert len(probes) == 1
    assert probes[0] < commands.index(("model", BETA_CHANGE[:20]))


@whole_session
async def test_the_next_prepared_step_reuses_the_last_ones_shadow_and_builds_on_the_right_base(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo()
    folders: list[str] = []
    spy_on_test_runs(monkeypatch, lambda folder, _: folders.append(folder))
    div = edit(
        "calc.py", "    return a * b\n", "    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
    )
    reviewer = SlowReviewer(waits=2)
    plan = plan_reply("Add sub", "Add mul", "Add div")
    result, seen = await run(repo, scripted_server, reviewer, plan, SUB, MUL_ON_SUB, div)

    assert result.exit_code == 0, result.message
    # Steps 2 and 3 were prepared in the same second shadow: the second time it was only reset
    # to the new base (a few files), not checked out again.
    prepared = [name for name in folders if "-next" in name]
    assert len(prepared) == 2 and len(set(prepared)) == 1
    first, second, third = result.commits
    assert parent_of(repo, second) == first and parent_of(repo, third) == second
    text = (repo / "calc.py").read_text()
    assert "def sub" in text and "def mul" in text and "return a / b" in text
    assert "+def div" in reviewer.shown[2] and "+def mul" not in reviewer.shown[2]
    assert shadows_left(repo) == []


class StopAgainAndAgain(SlowReviewer):
    """A human who quits while step 2 is prepared, then keeps pressing Ctrl+C (or whose
    terminal closes during the quit): the session is cancelled again and again while it
    cleans up."""

    def __init__(self) -> None:
        super().__init__(waits=1)
        self.session: asyncio.Task | None = None

    async def review(self, proposal):
        await asyncio.wait_for(self.prepared.wait(), 20)
        asyncio.get_running_loop().create_task(self.hammer())
        await asyncio.Event().wait()  # the quit ends this review

    async def hammer(self) -> None:
        assert self.session is not None
        while not self.session.done():
            self.session.cancel()
            await asyncio.sleep(0.005)


@whole_session
async def test_stop_requests_during_the_cleanup_leave_no_shadow_behind(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    reviewer = StopAgainAndAgain()
    session = asyncio.create_task(
        run(repo, scripted_server, reviewer, plan_reply("Add sub", "Add mul"), SUB, MUL_ON_SUB)
    )
    reviewer.session = session
    with pytest.raises(asyncio.CancelledError):
        await session
    # Removed by the time the session ends (not still going in a thread): in a real process
    # nothing may run after it.
    assert shadows_left(repo) == []


@whole_session
async def test_the_next_step_is_asked_for_once_the_affected_tests_passed_beside_the_full_suite(
    make_repo, scripted_server: ScriptedServer
) -> None:
    from tests.engine.test_engine_selection import (
        ALPHA_CHANGE,
        BETA_CHANGE,
        FILES,
        SELECTING,
        session,
    )

    repo = make_repo({**FILES, **SLOW_TEST})
    # A first session collects the selection data (its one run is the full suite).
    await session(repo, scripted_server, plan_reply("Touch beta"), BETA_CHANGE)
    seen_now: list[ev.Event] = []
    asked_during_full: list[bool] = []
    again = edit("beta.py", "    return x + x + x\n", "    return 3 * x\n")

    def step_2(request) -> Reply:
        full = [e for e in seen_now if isinstance(e, ev.TestsFinished) and e.scope == "full"]
        asked_during_full.append(not full)
        return Reply(text=again)

    reviewer = SlowReviewer(waits=1)

    def sink(event: ev.Event) -> None:
        seen_now.append(event)
        reviewer.sink(event)

    scripted_server.script(
        Reply(text=plan_reply("Touch alpha", "Touch beta again")), Reply(text=ALPHA_CHANGE), step_2
    )
    result, seen = await pipelined(
        repo, scripted_server, reviewer, "change things", sink=sink, **SELECTING
    )

    assert result.exit_code == 0, result.message
    # Step 1 ran its affected tests (alpha's 2), then the full suite (with the 3 s test):
    # step 2 was asked for as soon as the affected ones passed, while the full suite ran.
    assert [(f.scope, f.ok) for f in seen.of(ev.TestsFinished) if f.step == 1] == [
        ("affected", True), ("full", True)
    ]  # fmt: skip
    assert asked_during_full == [True]
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["Touch beta again", "Touch alpha"]
