"""Sessions in a repository without tests (a new project): refused with the two ways on, the
first step writing the tests (test-first), or an unverified session that says so everywhere.
Real engine, the openai client over HTTP to the scripted server, real git and pytest."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from tests.conftest import git
from tests.engine_support import create, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.cli.main import main
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.records.listing import format_runs, list_runs

CALC = create("calc.py", "def add(a, b):\n    return a + b\n")
CALC_TEST = create(
    "tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
)
NO_TESTS = {"README.md": "A calculator, one day.\n"}


pytestmark = pytest.mark.usefixtures("api_key")


def test_no_test_command_is_refused_naming_both_ways_on(
    make_repo, scripted_server: ScriptedServer, capsys
) -> None:
    repo = make_repo(NO_TESTS)
    url = scripted_server.base_url
    code = main(["run", "add add", "--yes", "-C", str(repo), "--base-url", url])
    err = capsys.readouterr().err
    assert code == 2
    assert "No test command" in err and "--write-tests" in err and "--unverified" in err
    assert scripted_server.chat_requests == []


@whole_session
async def test_write_tests_in_an_empty_repo_makes_the_first_step_test_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo({}, commit=False)  # `git init` and nothing else
    scripted_server.script(Reply(text=plan_reply("Add add")), Reply(text=CALC_TEST + CALC))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "add add", scripted_server.base_url, no_tests="write", sink=ProgressPrinter(out)
    )

    assert result.exit_code == 0
    assert git(repo, "log", "--format=%s") == "Add add"
    # The plan was asked to start with the tests, and its step was made test-first anyway.
    assert "no tests yet" in scripted_server.chat_requests[0].messages[-1]["content"]
    assert seen.of(ev.PlanReady)[0].steps[0].test_first
    assert [(e.scope, e.ok) for e in seen.of(ev.TestsFinished)] == [
        ("before", False),
        ("full", True),
    ]
    printed = out.getvalue()
    assert "tests: python -m pytest" in printed
    assert "No tests yet: the first step writes them" in printed
    assert "  1. Add add (test first)\n" in printed


async def test_an_unverified_session_runs_no_tests_and_says_so_everywhere(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(NO_TESTS)
    scripted_server.script(Reply(text=CALC))
    out = io.StringIO()
    result, seen = await run_headless(
        repo,
        "add add",
        scripted_server.base_url,
        no_tests="unverified",
        plan=False,
        sink=ProgressPrinter(out),
    )

    assert result.exit_code == 0  # the human chose it; every step is marked
    assert seen.of(ev.TestsStarted) == []
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.unverified and proposal.summary == "unverified: no tests ran"
    assert proposal.test_runs == ("unverified: no tests ran",)
    assert "Unverified: no tests ran." in git(repo, "log", "-1", "--format=%B")
    printed = out.getvalue()
    assert "tests: none (unverified: no tests run)" in printed
    assert "Unverified mode" in printed
    assert "1 step(s) committed (unverified: no tests ran)" in printed
    assert " 1 (unverified) " in format_runs(list_runs(repo))  # `tui-engineer runs`


def test_run_on_the_terminal_asks_how_to_go_on_without_tests(
    make_repo, scripted_server: ScriptedServer
) -> None:
    """Without --yes the answers come from the terminal anyway: it asks, as the TUI does."""
    repo = make_repo(NO_TESTS)
    scripted_server.script(Reply(text=CALC))
    answers = "x\nu\na\n\n\n"  # a stray answer, unverified, accept, done, no verdict
    done = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", "add add", "--no-plan", "-C", str(repo),
         "--base-url", scripted_server.base_url, "--model", "test-model"],
        input=answers, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "No tests found. [w]rite tests first" in done.stdout
    assert "Please answer w, u or q." in done.stderr
    assert "tests: unverified: no tests ran" in done.stdout
    assert "Unverified: no tests ran." in git(repo, "log", "-1", "--format=%B")
