"""Independent steps prepared side by side (engine/ahead/pipeline.py, `parallel_steps`), end to end:
real sessions, real git worktrees, real pytest runs, the scripted model over HTTP answering
each step from its own script (the calls arrive in any order), held at gates so that no test
waits on a clock."""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque

import pytest

from tests.conftest import git
from tests.engine_support import SUB, StepReviewer, create, edit, run_headless, shadows_left
from tests.scripted_server import Gate, RecordedRequest, Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import REACHED
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home

pytestmark = pytest.mark.usefixtures("api_key")


def plan(*steps: dict) -> str:
    """A plan reply; each step a dict with title, files and (optionally) reads."""
    full = [{"description": s["title"], "verify": "pytest", **s} for s in steps]
    return "Here is my plan.\n\n```json\n" + json.dumps({"steps": full}) + "\n```\n"


def module(name: str, body: str, check: str) -> str:
    """A new module `name`.py holding `body` and its test asserting `check`."""
    test = f"from {name} import {name}\n\n\ndef test_{name}():\n    assert {check}\n"
    return create(f"{name}.py", body) + create(f"tests/test_{name}.py", test)


SUB_STEP = {"title": "Add sub", "files": ["calc.py"]}
MUL_STEP = {"title": "Add mul", "files": ["mul.py", "tests/test_mul.py"]}
DIV_STEP = {"title": "Add div", "files": ["div.py", "tests/test_div.py"]}
NEG_STEP = {"title": "Add neg", "files": ["neg.py", "tests/test_neg.py"]}
# Needs mul.py as step 2 writes it: it depends on step 2.
SQUARE_STEP = {
    "title": "Add square",
    "files": ["square.py", "tests/test_square.py"],
    "reads": ["mul.py"],
}
MUL_MODULE = module("mul", "def mul(a, b):\n    return a * b\n", "mul(4, 3) == 12")
MUL_AGAIN = module("mul", "def mul(a, b):\n    return b * a\n", "mul(4, 3) == 12")
DIV_MODULE = module("div", "def div(a, b):\n    return a / b\n", "div(6, 3) == 2")
DIV_WRONG = module("div", "def div(a, b):\n    return a * b\n", "div(6, 3) == 2")
DIV_FIX = edit("div.py", "    return a * b\n", "    return a / b\n")
NEG_MODULE = module("neg", "def neg(a):\n    return -a\n", "neg(2) == -2")
SQUARE_MODULE = module(
    "square", "from mul import mul\n\n\ndef square(a):\n    return mul(a, a)\n", "square(3) == 9"
)
DIAGNOSIS = "The function multiplies instead of dividing."


class ByStep:
    """Answers each chat request from the script of the step it is about: "Now do step N"
    (propose, fix) or "Step: <title>" (a diagnosis). Steps prepared side by side call in any
    order; the plan call has no step."""

    def __init__(self, server: ScriptedServer, steps: list[dict], **replies: list[Reply]) -> None:
        self.server = server
        self.titles = {s["title"]: n for n, s in enumerate(steps, start=1)}
        self.replies = {int(k.removeprefix("step")): deque(v) for k, v in replies.items()}
        self.planned = deque([Reply(text=plan(*steps))])
        calls = 1 + sum(len(v) for v in self.replies.values())
        server.script(*([self.answer] * calls))

    def step_of(self, request: RecordedRequest) -> int | None:
        text = json.dumps(request.messages)
        found = re.search(r"Now do step (\d+)", text)
        if found:
            return int(found.group(1))
        titled = re.search(r"Step: ([A-Za-z ]+)\\n", text)
        return self.titles[titled.group(1)] if titled else None

    def answer(self, request: RecordedRequest) -> Reply:
        step = self.step_of(request)
        return (self.planned if step is None else self.replies[step]).popleft()

    def calls_for(self, step: int) -> int:
        return sum(1 for r in self.server.chat_requests if self.step_of(r) == step)


class Reader(StepReviewer):
    """A reviewer: before deciding review number n, awaits `before[n]` (a coroutine
    function), then gives `decisions[n]` (accept by default)."""

    def __init__(self, decisions: dict[int, Decision] | None = None, before=None) -> None:
        self.decisions = decisions or {}
        self.before = before or {}
        self.shown: list[str] = []
        self.prepared: dict[int, asyncio.Event] = {}

    def prepared_event(self, step: int) -> asyncio.Event:
        return self.prepared.setdefault(step, asyncio.Event())

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready:
            self.prepared_event(event.step).set()

    async def review(self, proposal):
        self.shown.append(proposal.diff)
        number = len(self.shown)
        if number in self.before:
            await asyncio.wait_for(self.before[number](), REACHED)
        return self.decisions.get(number, Decision.accept())


async def side_by_side(repo, server: ScriptedServer, request: str, reader: Reader):
    """The session asked `request`, three steps prepared at once while `reader` reviews (it
    hears every event: it waits for a step prepared); it must end well."""
    result, seen = await run_headless(
        repo, request, server.base_url, reviewer=reader, sink=reader.sink, pipeline=True,
        parallel_steps=3,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    return result, seen


def sub_edited_by_hand(repo, reader: Reader):
    """Before review 1: once step 2 is prepared on step 1 as proposed, the human rewrites step
    1's new line (`return a - b` as `return -(b - a)`) in the session's shadow."""

    async def edit_by_hand() -> None:
        await reader.prepared_event(2).wait()
        calc = f"{session_shadow(repo)}/calc.py"
        with open(calc) as old:
            text = old.read()
        with open(calc, "w") as new:
            new.write(text.replace("return a - b", "return -(b - a)"))

    return edit_by_hand


def session_shadow(repo) -> str:
    """The session's own shadow worktree (not a prepared step's)."""
    with open_repo(repo) as opened:
        home = shadow_home(opened)
    names = [
        p for p in home.iterdir() if p.is_dir() and "-next" not in p.name and "." not in p.name
    ]
    assert len(names) == 1, names
    return str(names[0])


@whole_session
async def test_three_independent_steps_are_prepared_at_once_one_with_a_fix_loop(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    gates = {2: Gate(), 3: Gate(), 4: Gate()}
    script = ByStep(
        scripted_server,
        [SUB_STEP, MUL_STEP, DIV_STEP, NEG_STEP],
        step1=[Reply(text=SUB)],
        step2=[Reply(text=MUL_MODULE, hold=gates[2])],
        # Its first answer is wrong: its own fix loop runs while the others are prepared.
        step3=[Reply(text=DIV_WRONG, hold=gates[3]), Reply(text=DIAGNOSIS), Reply(text=DIV_FIX)],
        step4=[Reply(text=NEG_MODULE, hold=gates[4])],
    )
    in_flight: list[int] = []

    async def all_three_asked() -> None:
        for gate in gates.values():
            await gate.arrived()
        # Three propose calls held at once: each asked before any of them was answered.
        asked = [script.step_of(r) for r in scripted_server.chat_requests]
        in_flight.extend(sorted(step for step in asked if step in gates))
        for gate in gates.values():
            gate.open()

    reader = Reader(before={1: all_three_asked})
    _, seen = await side_by_side(repo, scripted_server, "add sub, mul, div and neg", reader)

    assert in_flight == [2, 3, 4]
    assert [e.step for e in seen.of(ev.StepPreparing)] == [2, 3, 4]
    assert sorted(e.step for e in seen.of(ev.NextStepPrepared) if e.ready) == [2, 3, 4]
    # Step 3 fixed its own failure (diagnosis, fix) as it was prepared; nobody proposed again.
    purposes = [e.purpose for e in seen.of(ev.ModelExchange) if e.step == 3]
    assert purposes == ["propose", "diagnose", "fix"]
    assert len(scripted_server.chat_requests) == 1 + 1 + 1 + 3 + 1
    # Reviewed and committed one at a time, in plan order, each on the one before.
    assert git(repo, "log", "--format=%s").splitlines() == [
        "Add neg", "Add div", "Add mul", "Add sub", "initial"
    ]  # fmt: skip
    for index, diff in enumerate(reader.shown[1:], start=2):
        assert diff.count("+++ b/") == 2, (index, diff)  # its own two files, nothing else
    assert (repo / "div.py").read_text() == "def div(a, b):\n    return a / b\n"
    assert shadows_left(repo) == []


@whole_session
async def test_a_hand_edit_of_step_1_moves_the_step_prepared_on_it_and_tests_it_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    # Step 2 reads calc.py, which step 1 changes: it is prepared on step 1's proposal.
    script = ByStep(
        scripted_server,
        [SUB_STEP, {**MUL_STEP, "reads": ["calc.py"]}],
        step1=[Reply(text=SUB)],
        step2=[Reply(text=MUL_MODULE)],
    )
    reader = Reader()

    reader.before[1] = sub_edited_by_hand(repo, reader)
    reader.decisions[1] = Decision("edited")
    result, seen = await side_by_side(repo, scripted_server, "add sub and mul", reader)

    # Step 2 was not proposed again: moved onto the edited files and tested again there.
    assert script.calls_for(2) == 1
    assert [e.ok for e in seen.of(ev.TestsFinished) if e.step == 2] == [True, True]
    moved = [e for e in seen.of(ev.Notice) if "Step 2 was prepared on other files" in e.message]
    assert len(moved) == 1
    first, second = result.commits
    assert git(repo, "rev-parse", f"{second}^") == first
    assert "return -(b - a)" in (repo / "calc.py").read_text()
    assert (repo / "mul.py").is_file()
    assert "calc.py" not in reader.shown[-1]  # step 2's review shows its own files only
    assert git(repo, "show", "--format=", "--name-only", second).split() == [
        "mul.py", "tests/test_mul.py"
    ]  # fmt: skip
    assert shadows_left(repo) == []


@whole_session
async def test_a_rejected_step_drops_the_step_that_needs_it_and_keeps_an_independent_one(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    script = ByStep(
        scripted_server,
        [SUB_STEP, MUL_STEP, DIV_STEP, SQUARE_STEP],
        step1=[Reply(text=SUB)],
        step2=[Reply(text=MUL_MODULE), Reply(text=MUL_AGAIN)],
        step3=[Reply(text=DIV_MODULE)],
        step4=[Reply(text=SQUARE_MODULE), Reply(text=SQUARE_MODULE)],
    )
    reader = Reader()

    async def both_prepared() -> None:
        await reader.prepared_event(3).wait()
        await reader.prepared_event(4).wait()  # prepared on step 2's proposal

    reader.before = {1: lambda: reader.prepared_event(3).wait(), 2: both_prepared}
    reader.decisions = {2: Decision.reject("multiply the other way round")}
    _, seen = await side_by_side(repo, scripted_server, "add sub, mul, div and square", reader)

    dropped = [e.step for e in seen.of(ev.NextStepPrepared) if not e.ready]
    assert dropped == [4]  # step 4 reads what step 2 writes; step 3 does not
    assert script.calls_for(3) == 1  # kept, never proposed again
    assert script.calls_for(4) == 2  # proposed again on the new step 2
    assert git(repo, "log", "--format=%s").splitlines() == [
        "Add square", "Add div", "Add mul", "Add sub", "initial"
    ]  # fmt: skip
    assert "b * a" in (repo / "mul.py").read_text()
    assert (repo / "div.py").is_file() and (repo / "square.py").is_file()
    assert shadows_left(repo) == []


@whole_session
async def test_a_step_prepared_on_a_line_the_human_then_edits_is_proposed_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    # Step 2 adds mul right under step 1's new line; the human rewrites that very line.
    mul_on_sub = edit("calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n"
                      "    return a * b\n")  # fmt: skip
    mul_on_edit = edit("calc.py", "    return -(b - a)\n", "    return -(b - a)\n\n\n"
                       "def mul(a, b):\n    return a * b\n")  # fmt: skip
    script = ByStep(
        scripted_server,
        [SUB_STEP, {"title": "Add mul", "files": ["calc.py"]}],
        step1=[Reply(text=SUB)],
        step2=[Reply(text=mul_on_sub), Reply(text=mul_on_edit)],
    )
    reader = Reader(decisions={1: Decision("edited")})
    reader.before[1] = sub_edited_by_hand(repo, reader)
    _, seen = await side_by_side(repo, scripted_server, "add sub and mul", reader)

    said = [e.message for e in seen.of(ev.Notice)]
    assert any("Step 2's prepared proposal is not used (its changes conflict" in m for m in said)
    assert script.calls_for(2) == 2  # proposed again, on the edited step 1
    calc = (repo / "calc.py").read_text()
    assert "return -(b - a)" in calc and "def mul(a, b):\n    return a * b" in calc
    assert shadows_left(repo) == []
