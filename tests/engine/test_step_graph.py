"""The plan as a graph (engine/plans/step_graph.py): each step waits for the earlier steps that
change
what it reads or changes, and for those it names; a step that names no file waits for all."""

from __future__ import annotations

import io
import json

import pytest
from textual.app import App, ComposeResult

from tests.engine_support import SUB, StepReviewer, create, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import infos, parse_plan
from tui_engineer.engine.plans.step_graph import dependants, dependencies, waiting_on
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.headless.printer import JsonPrinter, ProgressPrinter
from tui_engineer.tui.panes.plan import PlanPane

pytestmark = pytest.mark.usefixtures("api_key")


def plan(*steps: dict) -> str:
    return "```json\n" + json.dumps({"steps": list(steps)}) + "\n```"


FIVE = plan(
    {"title": "Add a tax module", "files": ["tax.py"]},
    {"title": "Add invoices", "files": ["invoice.py"], "reads": ["tax.py"]},
    {"title": "Add a CLI flag", "files": ["cli.py"]},
    {"title": "Document it", "files": ["README.md"], "depends_on": [3]},
    {"title": "Tidy up"},
)


def test_edges_follow_the_files_each_step_changes_and_reads() -> None:
    steps = parse_plan(FIVE)
    assert dependencies(steps) == {
        1: (),
        2: (1,),  # reads what step 1 changes
        3: (),  # touches nothing an earlier step changes
        4: (3,),  # the plan says so
        5: (1, 2, 3, 4),  # names no file: after everything before it
    }


def test_two_steps_changing_one_file_are_in_plan_order() -> None:
    steps = parse_plan(
        plan({"title": "a", "files": ["calc.py"]}, {"title": "b", "files": ["./calc.py"]})
    )
    assert dependencies(steps)[2] == (1,)


def test_waiting_on_counts_accepted_and_skipped_steps_as_in() -> None:
    status = {1: "accepted", 2: "skipped", 3: "awaiting review"}
    assert waiting_on((1, 2, 3), status) == [3]


@whole_session
async def test_plan_ready_carries_the_edges_to_json(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    two = plan(
        {"title": "Add sub", "files": ["calc.py"]},
        {"title": "Test sub", "files": ["tests/test_sub.py"], "reads": ["calc.py"]},
    )
    test_sub = create(
        "tests/test_sub.py",
        "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
    )
    scripted_server.script(*(Reply(text=r, usage=(100, 10)) for r in (two, SUB, test_sub)))
    out = io.StringIO()
    printer = JsonPrinter(out)
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, sink=printer)
    assert result.exit_code == 0, result.message
    (ready,) = seen.of(ev.PlanReady)
    assert [(s.index, s.reads, s.after) for s in ready.steps] == [
        (1, (), ()),
        (2, ("calc.py",), (1,)),
    ]
    line = next(json.loads(x) for x in out.getvalue().splitlines() if '"plan_ready"' in x)
    assert [s["after"] for s in line["steps"]] == [[], [1]]


class PlanOnly(App[None]):
    def compose(self) -> ComposeResult:
        yield PlanPane(id="plan")


async def test_the_plan_pane_says_which_steps_are_ready_and_which_wait() -> None:
    app = PlanOnly()
    async with app.run_test() as pilot:
        pane = app.query_one(PlanPane)
        pane.set_steps(infos(parse_plan(FIVE)))
        pane.set_status(1, "awaiting review")
        await pilot.pause()
        shown = [str(pane.get_option_at_index(i).prompt) for i in range(pane.option_count)]
        assert "waiting on 1" in shown[1]
        assert shown[2].endswith("ready")
        assert "waiting on 3" in shown[3]
        assert "waiting on 1, 2, 3, 4" in shown[4]
        pane.set_status(1, "accepted")
        pane.set_status(3, "skipped")
        await pilot.pause()
        shown = [str(pane.get_option_at_index(i).prompt) for i in range(pane.option_count)]
        assert shown[1].endswith("ready") and shown[3].endswith("ready")
        assert "waiting on 2, 4" in shown[4]


def test_headless_lists_the_edges_that_are_not_plain_order() -> None:
    out = io.StringIO()
    ProgressPrinter(out)(ev.PlanReady(steps=infos(parse_plan(FIVE))))
    lines = out.getvalue().splitlines()
    assert lines[1:] == [
        "  1. Add a tax module",
        "  2. Add invoices",  # after step 1, the one before it: plain order
        "  3. Add a CLI flag (independent)",
        "  4. Document it (after 3)",
        "  5. Tidy up",
    ]


class Decides(StepReviewer):
    """A reviewer who skips the first step shown and accepts the rest."""

    def __init__(self) -> None:
        self.shown: list[int] = []

    async def review(self, proposal):
        self.shown.append(proposal.step.index)
        if len(self.shown) == 1:
            return Decision("skip", "not now")
        return Decision.accept()


def test_a_skipped_step_takes_only_the_steps_that_need_it() -> None:
    steps = parse_plan(FIVE)
    assert dependants(steps, 1) == [2]  # step 5 names no file: not certain, it stays
    assert dependants(steps, 3) == [4]
    # Two steps changing one file take turns, but one does not need the other.
    both = parse_plan(
        plan({"title": "Add sub", "files": ["calc.py"]}, {"title": "Add mul", "files": ["calc.py"]})
    )
    assert dependencies(both)[2] == (1,) and dependants(both, 1) == []


@whole_session
async def test_skipping_a_step_drops_what_reads_it_and_keeps_what_does_not(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    three = plan(
        {"title": "Add sub", "files": ["calc.py"]},
        {"title": "Test sub", "files": ["tests/test_sub.py"], "reads": ["calc.py"]},
        {"title": "Add notes", "files": ["NOTES.md"]},
    )
    notes = create("NOTES.md", "calc adds numbers\n")
    scripted_server.script(*(Reply(text=r, usage=(100, 10)) for r in (three, SUB, notes)))
    reviewer = Decides()
    result, seen = await run_headless(
        repo, "add sub, its test, notes", scripted_server.base_url, reviewer=reviewer
    )
    assert reviewer.shown == [1, 3]  # step 2 was never proposed
    assert len(scripted_server.chat_requests) == 3  # the plan, step 1, step 3
    skipped = {e.step: e.reason for e in seen.of(ev.StepSkipped)}
    assert skipped == {1: "not now", 2: "it needs step 1, which was skipped"}
    assert len(result.commits) == 1
    assert (repo / "NOTES.md").read_text() == "calc adds numbers\n"
    assert "def sub" not in (repo / "calc.py").read_text()
