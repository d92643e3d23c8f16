"""A baseline: the suite on the starting commit, so that tests already red are not a step's
failures (issue 18, section 2). One-step sessions with the scripted model over real HTTP, the
repo's tests in its own venv (pytest from the index, no dev extras) in the local sandbox."""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import edit, run_headless
from tests.env_support import activate, project_venv, unpacked_sdist
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

MUL_ID = "tests/test_calc.py::test_mul"
FILES = {
    ".gitignore": ".venv/\n",
    "calc.py": (
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a + b\n"
    ),
    "tests/test_calc.py": (
        "from calc import add, mul, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(3, 1) == 2\n\n\n"
        "def test_mul():\n    assert mul(4, 3) == 12\n"
    ),
}
BREAK_SUB = edit("calc.py", "def sub(a, b):\n    return a - b\n", "def sub(a, b):\n    return b\n")
ADD = "def add(a, b):\n"
FIX_ADD = edit("calc.py", f"{ADD}    return a - b\n", f"{ADD}    return a + b\n")


pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture
def command(make_repo, monkeypatch: pytest.MonkeyPatch, pytest_wheels):
    def make(files: dict[str, str]):
        repo = make_repo(files)
        return repo, activate(monkeypatch, project_venv(repo, pytest_wheels))

    return make


async def _session(repo, server: ScriptedServer, command: str, request: str, **flags):
    flags = {"plan": False, **flags}
    return await run_headless(
        repo, request, server.base_url, test_command=command, sandbox="local", **flags
    )


async def test_a_fix_of_add_commits_while_test_mul_was_already_red(
    command, scripted_server: ScriptedServer
) -> None:
    repo, test_command = command(FILES)
    scripted_server.script(Reply(text=FIX_ADD))
    out = io.StringIO()
    result, seen = await _session(
        repo, scripted_server, test_command, "fix add", sink=ProgressPrinter(out)
    )
    assert result.exit_code == 0, out.getvalue()
    assert len(result.commits) == 1
    assert len(scripted_server.chat_requests) == 1  # no fix loop about test_mul
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.failing == ("tests/test_calc.py::test_add", MUL_ID)
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (MUL_ID,)
    assert "1 failing before this session" in proposal.summary
    assert f"failing before this session: {MUL_ID}" in out.getvalue()


@whole_session
async def test_an_old_failure_the_request_names_is_the_steps_to_fix(
    command, scripted_server: ScriptedServer
) -> None:
    repo, test_command = command(FILES)
    mul = "def mul(a, b):\n"
    fix_mul = edit("calc.py", f"{mul}    return a + b\n", f"{mul}    return a * b\n")
    scripted_server.script(Reply(text=FIX_ADD), Reply(text="mul adds."), Reply(text=fix_mul))
    result, seen = await _session(repo, scripted_server, test_command, "make test_mul pass")
    assert result.exit_code == 0
    # The first attempt left test_mul red: named in the request, so it went to the model.
    fix_prompt = scripted_server.chat_requests[2].messages[-1]["content"]
    assert "test_mul" in fix_prompt
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.old_failures == ()


@whole_session
async def test_breaking_a_test_that_passed_at_the_start_fails_and_old_ones_stay_out_of_the_prompt(
    command, scripted_server: ScriptedServer
) -> None:
    repo, test_command = command(FILES)
    scripted_server.script(Reply(text=BREAK_SUB), Reply(text="sub is wrong"), Reply(text="no"))
    result, seen = await _session(
        repo, scripted_server, test_command, "simplify sub", max_fix_attempts=1
    )
    assert result.exit_code == 1 and not result.commits
    failing = seen.of(ev.TestsFinished)[0].failing
    assert failing == ("tests/test_calc.py::test_sub",)
    diagnose = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "test_sub" in diagnose and "test_mul" not in diagnose


@whole_session
async def test_a_suite_that_cannot_run_stops_the_session_before_the_model_answers(
    command, scripted_server: ScriptedServer
) -> None:
    repo, test_command = command({**FILES, "tests/conftest.py": "import calcplugin\n"})
    gate = Gate()
    scripted_server.script(Reply(text=FIX_ADD, hold=gate))
    result, seen = await _session(repo, scripted_server, test_command, "fix add")
    gate.open()
    assert result.exit_code == 2
    (failed,) = seen.of(ev.BaselineFailed)
    assert failed.command == test_command
    assert "No module named 'calcplugin'" in result.message
    assert test_command in result.message and "--unverified" in result.message
    assert not seen.of(ev.ModelExchange)  # no model reply was waited for, or paid


async def test_a_suite_that_cannot_start_costs_no_model_call(
    command, scripted_server: ScriptedServer
) -> None:
    """Issue 33, part 4: the propose call waits until the tests have started (a test's result
    in the baseline's output), so a setup that fails a second in costs nothing, every time."""
    slow_broken = "import time\n\ntime.sleep(1.5)\nimport calcplugin\n"
    repo, test_command = command({**FILES, "tests/conftest.py": slow_broken})
    scripted_server.script(Reply(text=BREAK_SUB))
    result, seen = await _session(repo, scripted_server, test_command, "simplify sub")
    assert result.exit_code == 2, result.message
    assert "No module named 'calcplugin'" in result.message
    assert scripted_server.chat_requests == []  # not asked, not paid


@whole_session
async def test_a_second_session_on_the_same_tree_reuses_the_baseline(
    command, scripted_server: ScriptedServer
) -> None:
    repo, test_command = command(FILES)
    scripted_server.script(Reply(text=BREAK_SUB))
    first, seen = await _session(repo, scripted_server, test_command, "x", max_fix_attempts=0)
    assert first.exit_code == 1 and not seen.of(ev.BaselineReady)[0].recorded
    scripted_server.script(Reply(text=FIX_ADD))
    second, seen = await _session(repo, scripted_server, test_command, "fix add")
    assert second.exit_code == 0
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.recorded and baseline.failing == ("tests/test_calc.py::test_add", MUL_ID)


async def test_the_baseline_starts_while_the_server_is_still_asked_its_context_window(
    command,
) -> None:
    """A server slow to tell its window (a remote one, a local one loading) holds back only
    the first prompt, which needs it, not the starting commit's suite."""
    repo, test_command = command(FILES)
    with ScriptedServer(context_window=8192) as server:
        # The start-up check's model list answers at once; the window's asking takes 3 s.
        server.script_models(Reply(), Reply(delay=3))
        server.script(Reply(text=FIX_ADD))
        result, seen = await _session(repo, server, test_command, "fix add")
    assert result.exit_code == 0
    told = next(
        i for i, e in enumerate(seen.events)
        if isinstance(e, ev.Notice) and e.message.startswith("Context window: 8,192")
    )  # fmt: skip
    started = seen.events.index(seen.of(ev.BaselineStarted)[0])
    assert started < told < seen.events.index(seen.of(ev.ModelCallStarted)[0])


TAKE_TEST = "tests/test_recipes.py::TakeTests::test_simple_take"


@pytest.fixture(scope="session")
def more_itertools_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """more-itertools' source release from the package index: a real library nobody here wrote,
    with its own test suite."""
    return unpacked_sdist(tmp_path_factory.mktemp("more-itertools"), "more-itertools==11.2.1")


@pytest.mark.slow  # a real project's whole suite, run several times: 131 s at -n 4, load 13
async def test_a_fix_in_more_itertools_commits_and_names_the_test_that_failed_before(
    more_itertools_sdist: Path, tmp_path: Path, scripted_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch, pytest_wheels,
) -> None:  # fmt: skip
    repo = tmp_path / "more-itertools"
    shutil.copytree(more_itertools_sdist, repo)
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "\n.venv/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more-itertools 11.2.1")
    tests = repo / "tests" / "test_recipes.py"
    broken = tests.read_text().replace(
        "self.assertEqual(t, [0, 1, 2, 3, 4])", "self.assertEqual(t, [0, 1, 2, 3])", 1
    )
    tests.write_text(broken)
    git(repo, "commit", "-q", "-am", "A test that fails")
    command = activate(monkeypatch, project_venv(repo, pytest_wheels))
    docstring = edit(
        "more_itertools/recipes.py",
        '    """Return first *n* items of the *iterable* as a list.\n',
        '    """Return the first *n* items of the *iterable* as a list.\n',
    )
    # take's docstring lies inside take, which test_simple_take calls: the change runs through
    # that old failure (engine/steps/reach.py), so it is the step's until the model says it is not.
    why = "this step fixes a docstring; the test's expected list is wrong"
    scripted_server.script(
        Reply(text=docstring),
        Reply(text="test_simple_take expects four items from take(5, ...)."),
        Reply(text=f"NOT THIS STEP'S: {TAKE_TEST}: {why}\n"),
    )
    out = io.StringIO()
    result, seen = await _session(
        repo, scripted_server, command, "fix the grammar of take's docstring",
        sink=ProgressPrinter(out), test_timeout=600,
    )  # fmt: skip
    printed = out.getvalue()
    assert result.exit_code == 0, printed
    assert git(repo, "log", "-1", "--format=%s") == "fix the grammar of take's docstring"
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (TAKE_TEST,)
    assert proposal.still_failing == (TAKE_TEST,) and "auto (tests passed)" not in printed
    assert f"{TAKE_TEST}. Not this step's, says the model: {why}" in printed
    assert why in git(repo, "log", "-1", "--format=%B")
    assert len(scripted_server.chat_requests) == 3  # propose, diagnose, the answer
    # Only the test the change runs through: none of the other 900 tests of the file.
    fix_prompt = scripted_server.chat_requests[2].messages[-1]["content"]
    assert "it calls take(), which the step changed in more_itertools/recipes.py" in fix_prompt


@whole_session
async def test_a_step_prepared_during_review_is_judged_against_the_baseline_too(
    command, scripted_server: ScriptedServer
) -> None:
    from tests.engine.test_engine_pipeline import SlowReviewer
    from tests.engine_support import plan_reply

    repo, test_command = command(FILES)
    sub_doc = edit("calc.py", "def sub(a, b):\n", 'def sub(a, b):\n    """a minus b"""\n')
    scripted_server.script(
        Reply(text=plan_reply("Fix add", "Document sub")), Reply(text=FIX_ADD), Reply(text=sub_doc)
    )
    reviewer = SlowReviewer(waits=1)  # step 2 is prepared while step 1 is reviewed
    result, seen = await _session(
        repo, scripted_server, test_command, "fix add, document sub", plan=True, pipeline=True,
        reviewer=reviewer, sink=reviewer.sink,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert len(result.commits) == 2
    assert len(scripted_server.chat_requests) == 3  # no fix asked about test_mul in the background
    assert [p.old_failures for p in seen.of(ev.ProposalReady)] == [(MUL_ID,), (MUL_ID,)]


def test_a_program_that_exists_outside_the_sandbox_only_is_named_so() -> None:
    from tui_engineer.verify.baseline import start_failure_message
    from tui_engineer.verify.report import TestReport

    command = f"{sys.executable} -m pytest -q"
    report = TestReport(command, 127, 0.1, False, output_tail=f"sh: 1: {sys.executable}: not found")
    message = start_failure_message(command, "its program could not be started", report)
    assert f"`{sys.executable}` exists on this machine but not inside the sandbox" in message


@whole_session
async def test_an_old_failure_the_plans_verify_names_is_the_steps_to_fix(
    command, scripted_server: ScriptedServer
) -> None:
    import json

    repo, test_command = command(FILES)
    step = {"title": "Fix mul", "description": "mul must multiply", "files": ["calc.py"],
            "verify": f"{MUL_ID} passes"}  # fmt: skip
    plan = "```json\n" + json.dumps({"steps": [step]}) + "\n```\n"
    mul = "def mul(a, b):\n"
    fix_mul = edit("calc.py", f"{mul}    return a + b\n", f"{mul}    return a * b\n")
    scripted_server.script(
        Reply(text=plan), Reply(text=FIX_ADD), Reply(text="mul adds."), Reply(text=fix_mul)
    )
    result, seen = await _session(repo, scripted_server, test_command, "mul is wrong", plan=True)
    assert result.exit_code == 0, result.message
    assert "test_mul" in scripted_server.chat_requests[3].messages[-1]["content"]  # the fix call
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.old_failures == ()


async def test_a_reused_baseline_that_could_not_be_read_test_by_test_says_so_again(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """A test command whose output names no tests (a script) failing on the starting commit:
    each step is judged by the exit code alone, and the session says so, also when that
    result is reused from an earlier session on the same tree."""
    from tests.conftest import SAMPLE_FILES
    from tests.engine_support import SUB
    from tui_engineer.engine.steps.baseline import UNREADABLE

    check = "import sys\n\nimport calc\n\nsys.exit(0 if hasattr(calc, 'sub') else 1)\n"
    repo = make_repo({**SAMPLE_FILES, "check.py": check})
    test_command = f"{sys.executable} check.py"
    nothing = edit("calc.py", "    return a + b\n", "    return b + a\n")
    scripted_server.script(Reply(text=nothing))
    first, seen = await _session(repo, scripted_server, test_command, "x", max_fix_attempts=0)
    assert not seen.of(ev.BaselineReady)[0].recorded
    assert UNREADABLE in [n.message for n in seen.of(ev.Notice)]
    scripted_server.script(Reply(text=SUB))
    second, seen = await _session(repo, scripted_server, test_command, "add sub")
    assert second.exit_code == 0, second.message
    assert seen.of(ev.BaselineReady)[0].recorded  # reused: not run again
    assert UNREADABLE in [n.message for n in seen.of(ev.Notice)]
