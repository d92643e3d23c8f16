"""Test-first steps end to end: the real engine, the openai client over HTTP to the scripted
server, real git and real pytest. A step the plan marks test_first must bring a test that fails
on the old code and passes with the change; the review shows both runs."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from tests.conftest import git
from tests.engine_support import StepReviewer, create, edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import Decision
from tui_engineer.engine.steps.test_first import judge
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify import TestReport

MUL_CODE = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
)
MUL_TEST = edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_mul():\n    from calc import mul\n"
    "    assert mul(4, 3) == 12\n",
)
# A "new test" that only checks what add already did: it passes on the old code.
ADD_AGAIN_TEST = edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n",
)
MUL_TEST_AFTER_ADD_AGAIN = edit(
    "tests/test_calc.py",
    "    assert add(0, 0) == 0\n",
    "    assert add(0, 0) == 0\n\n\ndef test_mul():\n    from calc import mul\n"
    "    assert mul(4, 3) == 12\n",
)


pytestmark = pytest.mark.usefixtures("api_key")


def plan_with_test_first(title: str = "Add mul") -> str:
    step = {"title": title, "description": title, "files": ["calc.py"], "test_first": True}
    return "The plan.\n\n```json\n" + json.dumps({"steps": [step]}) + "\n```\n"


@pytest.fixture
def run_one_step(make_repo, scripted_server: ScriptedServer):
    """Run a plan of one test-first step (`title`) on the calc sample repo, the model's replies
    after the plan being `replies`; gives the repo, the result and the events."""

    async def run(*replies: str, title: str = "Add mul", **options):
        repo = make_repo()
        scripted_server.script(
            Reply(text=plan_with_test_first(title)), *(Reply(text=r) for r in replies)
        )
        result, seen = await run_headless(repo, title.lower(), scripted_server.base_url, **options)
        return repo, result, seen

    return run


def scopes(seen) -> list[tuple[str, bool]]:
    return [(e.scope, e.ok) for e in seen.of(ev.TestsFinished)]


@whole_session
async def test_a_test_first_step_fails_before_and_passes_after_and_shows_both_runs(
    run_one_step, scripted_server: ScriptedServer
) -> None:
    out = io.StringIO()
    repo, result, seen = await run_one_step(MUL_TEST + MUL_CODE, sink=ProgressPrinter(out))

    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "initial"]
    # The new test ran alone on the old code (failed), then everything with the change (passed).
    assert scopes(seen) == [("before", False), ("full", True)]
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok
    before, after = proposal.test_runs
    assert before.startswith("before the change: 1 passed, 1 failed")
    assert before.endswith("(expected)")
    assert after.startswith("after the change (full): 2 passed")
    printed = out.getvalue()
    assert "✓ before the change: 1 passed, 1 failed" in printed and "(expected)" in printed
    # The model was told, in the plan call and the step's call, what test-first means.
    plan_call, propose_call = scripted_server.chat_requests
    assert '"test_first": true' in plan_call.messages[-1]["content"]
    assert "This step is test-first" in propose_call.messages[-1]["content"]
    (plan,) = seen.of(ev.PlanReady)
    assert plan.steps[0].test_first


@whole_session
async def test_a_new_test_that_passes_on_the_old_code_is_caught_and_sent_back(
    run_one_step, scripted_server: ScriptedServer
) -> None:
    repo, result, seen = await run_one_step(
        ADD_AGAIN_TEST + MUL_CODE,
        MUL_TEST_AFTER_ADD_AGAIN,  # the fix: a test that exercises mul
    )

    assert result.exit_code == 0
    # First attempt: the "new" test passed on the old code; no diagnosis call, a fix instead.
    assert scopes(seen) == [("before", True), ("full", True), ("before", False), ("full", True)]
    assert len(scripted_server.chat_requests) == 3
    fix = scripted_server.chat_requests[2].messages[-1]["content"]
    assert "the new test passes on the old code: it does not test the change" in fix
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.attempts == 1
    assert proposal.test_runs[0].startswith("before the change: 2 passed, 1 failed")
    assert "def test_mul" in (repo / "tests/test_calc.py").read_text()


# A first answer that puts the new code's import in conftest.py: on the old code pytest stops
# loading it (exit code 4) before any test runs, so the run proves nothing about the new test.
CONFTEST_IMPORTS_MUL = create("tests/conftest.py", "from calc import mul  # noqa: F401\n")
CONFTEST_WITHOUT_IT = edit("tests/conftest.py", "from calc import mul  # noqa: F401\n", "")


@whole_session
async def test_a_run_on_the_old_code_where_pytest_never_ran_a_test_is_sent_back(
    run_one_step, scripted_server: ScriptedServer
) -> None:
    """The model's first answer is wrong in a way the exit code hides: the run on the old code
    "fails", but only because pytest could not load conftest.py. That is no evidence the new
    test tests the change: the model is told so, and its fix is checked again."""
    repo, result, seen = await run_one_step(
        CONFTEST_IMPORTS_MUL + MUL_TEST + MUL_CODE, CONFTEST_WITHOUT_IT
    )

    assert result.exit_code == 0
    assert scopes(seen) == [("before", False), ("full", True), ("before", False), ("full", True)]
    fix = scripted_server.chat_requests[2].messages[-1]["content"]
    assert "pytest did not get to run the new test on the old code (exit code 4" in fix
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.attempts == 1
    assert proposal.test_runs[0].startswith("before the change: 1 passed, 1 failed")
    assert "import mul" not in (repo / "tests/conftest.py").read_text()


def test_a_new_test_that_hangs_or_crashes_on_the_old_code_fails_there() -> None:
    """A run on the old code that hit the test timeout, or whose Python a signal killed, shows
    no test's result either (-q prints a test's mark once it ends), but the new test did run:
    hanging or crashing there is failing there."""
    hung = TestReport("python -m pytest -q tests/test_calc.py", None, 300.0, True)
    crashed = TestReport("python -m pytest -q tests/test_calc.py", -11, 0.4, False)
    stopped = TestReport("python -m pytest -q tests/test_calc.py", 4, 0.3, False)
    assert judge(hung) == judge(crashed) == ""
    assert judge(stopped).startswith("pytest did not get to run the new test on the old code")


@whole_session
async def test_without_fix_attempts_the_useless_test_is_shown_and_not_accepted(
    run_one_step,
) -> None:
    repo, result, seen = await run_one_step(ADD_AGAIN_TEST + MUL_CODE, max_fix_attempts=0)

    (proposal,) = seen.of(ev.ProposalReady)
    assert not proposal.tests_ok
    assert proposal.summary.startswith("the new test passes on the old code")
    assert proposal.test_runs[0].endswith(
        "(the new test passes on the old code: it does not test the change)"
    )
    assert result.exit_code == 1  # --yes accepts only verified steps
    assert git(repo, "log", "--format=%s").splitlines() == ["initial"]


@whole_session
async def test_a_test_first_step_that_writes_no_test_is_asked_for_one(
    run_one_step, scripted_server: ScriptedServer
) -> None:
    _, result, seen = await run_one_step(MUL_CODE, MUL_TEST)

    assert result.exit_code == 0
    fix = scripted_server.chat_requests[2].messages[-1]["content"]
    assert "this step is test-first but wrote no test" in fix
    assert scopes(seen) == [("full", True), ("before", False), ("full", True)]


@whole_session
async def test_a_test_first_step_that_only_adds_tests_is_not_held_back(
    run_one_step,
) -> None:
    """A plan that marks a tests-only step test_first: there is no old code for the test to
    fail on, so no "before" run and no complaint; the tests passing decides."""
    _, result, seen = await run_one_step(ADD_AGAIN_TEST, title="Test add")

    assert result.exit_code == 0
    assert scopes(seen) == [("full", True)]
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok
    assert proposal.test_runs[0] == (
        "before the change: not run (the step changes only tests: there is no old code to fail on)"
    )


@whole_session
async def test_with_the_setting_off_a_test_first_step_is_verified_as_before(
    run_one_step, scripted_server: ScriptedServer
) -> None:
    _, result, seen = await run_one_step(ADD_AGAIN_TEST + MUL_CODE, test_first=False)

    assert result.exit_code == 0
    assert scopes(seen) == [("full", True)]  # no run on the old code
    (proposal,) = seen.of(ev.ProposalReady)
    assert not any(run.startswith("before") for run in proposal.test_runs)
    plan_call, propose_call = scripted_server.chat_requests
    assert "test_first" not in plan_call.messages[-1]["content"]
    assert "test-first" not in propose_call.messages[-1]["content"]


SUB_WITH_TEST = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
) + edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_sub():\n    from calc import sub\n"
    "    assert sub(5, 3) == 2\n",
)
MUL_ON_SUB_WITH_TEST = edit(
    "calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
) + edit(
    "tests/test_calc.py",
    "    assert sub(5, 3) == 2\n",
    "    assert sub(5, 3) == 2\n\n\ndef test_mul():\n    from calc import mul\n"
    "    assert mul(4, 3) == 12\n",
)


class WaitsForTheNextStep(StepReviewer):
    """Accepts step 1 only once step 2 was prepared (as a human still reading would)."""

    def __init__(self) -> None:
        self.prepared = asyncio.Event()

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready:
            self.prepared.set()

    async def review(self, proposal):
        if proposal.step.index == 1:
            await asyncio.wait_for(self.prepared.wait(), 180)  # pytest runs are slow here
        return Decision.accept()


@whole_session
async def test_a_test_first_step_prepared_during_review_is_checked_on_the_step_before_it(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Step 2 is prepared (pipeline) on step 1's proposal, with affected tests first: its "old
    code" is step 1's proposal, where sub exists and mul does not."""
    repo = make_repo()
    steps = [{"title": t, "test_first": True} for t in ("Add sub", "Add mul")]
    plan = "```json\n" + json.dumps({"steps": steps}) + "\n```\n"
    scripted_server.script(
        Reply(text=plan), Reply(text=SUB_WITH_TEST), Reply(text=MUL_ON_SUB_WITH_TEST)
    )
    reviewer = WaitsForTheNextStep()
    result, seen = await run_headless(
        repo,
        "add sub and mul",
        scripted_server.base_url,
        reviewer=reviewer,
        sink=reviewer.sink,
        pipeline=True,
        full_tests_always=False,
    )

    assert result.exit_code == 0, result.message
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    first, second = seen.of(ev.ProposalReady)
    # On step 1's proposal test_sub passes and test_mul fails: 2 passed, 1 failed.
    before = [e.output_tail for e in seen.of(ev.TestsFinished) if e.scope == "before"]
    assert second.test_runs[0].startswith("before the change: 2 passed, 1 failed"), before
    assert first.tests_ok and second.tests_ok
