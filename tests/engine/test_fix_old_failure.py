"""A "fix this" request whose failure was already red at the start (issue 33, part 1): the model
is told what fails, the step is judged by the failure it is meant to fix, and a first attempt
that fixes nothing goes to the fix loop instead of being committed as "tests passed".

Models whose first answer is wrong, over real HTTP; each repository's tests with its own runner
(pytest in the repo's own venv, unittest in a venv with no pytest, cargo, node's test runner, go)
in the local sandbox."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine.test_go_sessions import FILES as GO_FILES
from tests.engine_support import edit, run_headless
from tests.env_support import activate, project_venv
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

ADD_ID = "tests/test_calc.py::test_add"
MUL_ID = "tests/test_calc.py::test_mul"
CALC = {
    ".gitignore": ".venv/\n",
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": (
        "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(4, 3) == 12\n"
    ),
}
WRONG = edit("calc.py", "    return a - b\n", "    return a * b\n")
RIGHT = edit("calc.py", "def add(a, b):\n    return a * b\n", "def add(a, b):\n    return a + b\n")


pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture
def calc_repo(make_repo, monkeypatch: pytest.MonkeyPatch, pytest_wheels):
    def make(files: dict[str, str] = CALC) -> tuple[Path, str]:
        repo = make_repo(files)
        return repo, activate(monkeypatch, project_venv(repo, pytest_wheels))

    return make


async def test_a_wrong_first_fix_of_an_old_failure_goes_to_the_fix_loop_and_the_right_one_commits(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    repo, command = calc_repo()
    scripted_server.script(
        Reply(text=WRONG), Reply(text="add multiplies: 2 * 3 is 6."), Reply(text=RIGHT)
    )
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, test_command=command,
        sandbox="local", sink=ProgressPrinter(out),
    )  # fmt: skip
    printed = out.getvalue()
    assert result.exit_code == 0, printed
    # The model was told what fails on the starting commit, and that this step is to fix it.
    propose = scripted_server.chat_requests[0].messages[-1]["content"]
    assert ADD_ID in propose and "assert" in propose
    # The wrong edit (a * b) did not pass: test_add is the step's, not "failing before".
    first = seen.of(ev.TestsFinished)[0]  # the starting commit's run is BaselineReady
    assert not first.ok and first.failing == (ADD_ID,)
    assert len(scripted_server.chat_requests) == 3  # propose, diagnose, fix
    assert ADD_ID in scripted_server.chat_requests[2].messages[-1]["content"]
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == ()
    assert f"now passes: {ADD_ID}" in proposal.summary
    assert printed.count("accepted: auto (tests passed)") == 1
    assert "return a + b" in git(repo, "show", "HEAD:calc.py")


async def test_a_fix_that_never_fixes_the_old_failure_is_not_committed(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    repo, command = calc_repo()
    scripted_server.script(Reply(text=WRONG), Reply(text="add multiplies."), Reply(text="no"))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, test_command=command,
        sandbox="local", sink=ProgressPrinter(out), max_fix_attempts=1,
    )  # fmt: skip
    assert result.exit_code == 1 and not result.commits
    assert "tests passed" not in out.getvalue()
    assert git(repo, "log", "--format=%s") == "initial"


@whole_session
async def test_the_failing_tests_are_the_steps_when_the_request_asks_to_make_them_pass(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    repo, command = calc_repo()
    scripted_server.script(Reply(text=WRONG), Reply(text="add multiplies."), Reply(text=RIGHT))
    result, seen = await run_headless(
        repo, "make the failing tests pass", scripted_server.base_url, plan=False,
        test_command=command, sandbox="local",
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 3
    assert seen.of(ev.TestsFinished)[0].failing == (ADD_ID,)


@whole_session
async def test_a_request_that_does_not_point_at_an_old_failure_is_not_held_by_it(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """The old failure of toolz's kind: red before, unrelated to the request, never blocks."""
    repo, command = calc_repo()
    doc = edit("calc.py", "def mul(a, b):\n", 'def mul(a, b):\n    """a times b"""\n')
    scripted_server.script(Reply(text=doc))
    result, seen = await run_headless(
        repo, "document mul", scripted_server.base_url, plan=False, test_command=command,
        sandbox="local",
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 1
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.old_failures == (ADD_ID,)


@whole_session
async def test_the_plan_says_which_old_failure_each_step_fixes(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    repo, command = calc_repo()
    steps = [
        {"title": "Document mul", "files": ["calc.py"]},
        {"title": "Repair the sum", "files": ["calc.py"], "fixes": [ADD_ID]},
    ]
    plan = "```json\n" + json.dumps({"steps": steps}) + "\n```\n"
    doc = edit("calc.py", "def mul(a, b):\n", 'def mul(a, b):\n    """a times b"""\n')
    scripted_server.script(
        Reply(text=plan), Reply(text=doc), Reply(text=WRONG), Reply(text="no."), Reply(text=RIGHT)
    )
    result, seen = await run_headless(
        repo,
        "tidy calc and fix what fails",
        scripted_server.base_url,
        test_command=command,
        sandbox="local",
    )
    assert result.exit_code == 0, result.message
    planned = seen.of(ev.PlanReady)[0].steps
    assert [s.fixes for s in planned] == [(), (ADD_ID,)]
    # The plan call knew what failed at the start; so did step 2's proposal.
    assert ADD_ID in scripted_server.chat_requests[0].messages[-1]["content"]
    assert (
        "This step is to make these pass"
        in scripted_server.chat_requests[2].messages[-1]["content"]
    )
    first, second = seen.of(ev.ProposalReady)
    assert first.old_failures == (ADD_ID,)  # step 1 is not held by it
    assert second.old_failures == () and f"now passes: {ADD_ID}" in second.summary
    assert len(result.commits) == 2


# --- other runners: the same first-wrong-then-right session ------------------------------------

CARGO = shutil.which("cargo") or (
    "/root/.cargo/bin/cargo" if os.path.exists("/root/.cargo/bin/cargo") else None
)
NODE = shutil.which("node")

RUST = {
    "Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n'
    "[dependencies]\n",
    ".gitignore": "target/\n",
    "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 {\n    a - b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    use super::*;\n\n"
    "    #[test]\n    fn test_add() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n",
}
NODE_FILES = {
    "package.json": json.dumps(
        {"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}}
    ),
    "calc.js": "exports.add = (a, b) => a - b;\n",
    "test/calc.test.js": "const test = require('node:test');\n"
    "const assert = require('node:assert');\nconst { add } = require('../calc');\n"
    "test('add', () => { assert.strictEqual(add(2, 3), 5); });\n",
}


def _swap(path: str, line: str, old: str, new: str) -> str:
    return edit(path, line.replace("OP", old), line.replace("OP", new))


# runner: (files, the file to edit, add's line with OP for its operator, the test id red first)
RUNNERS = {
    "cargo": (RUST, "src/lib.rs", "    a OP b\n}\n", "tests::test_add"),
    "node": (NODE_FILES, "calc.js", "exports.add = (a, b) => a OP b;\n", "test/calc.test.js > add"),
    "go": (GO_FILES, "calc.go", "\treturn a OP b\n", "example.com/calc::TestAdd"),
}
NEEDS = {"cargo": CARGO, "node": NODE, "go": shutil.which("go")}


@whole_session
@pytest.mark.parametrize("runner", list(RUNNERS))
async def test_a_wrong_first_fix_goes_to_the_fix_loop_with_each_runner(
    runner: str, make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    if NEEDS[runner] is None:
        pytest.skip(f"{runner} is not installed")
    if runner == "cargo" and shutil.which("cargo") is None:
        monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ['PATH']}")
    files, path, line, first_red = RUNNERS[runner]
    repo = make_repo(files)
    wrong, right = _swap(path, line, "-", "*"), _swap(path, line, "*", "+")
    scripted_server.script(Reply(text=wrong), Reply(text="add multiplies."), Reply(text=right))
    result, seen = await run_headless(repo, "fix add", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 3  # propose, diagnose, fix
    assert seen.of(ev.TestsFinished)[0].failing == (first_red,)
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and first_red not in proposal.old_failures
    # node's TAP names a passing test without its file (node 20): still "now passes" is known.
    assert proposal.fixed == (first_red,) and f"now passes: {first_red}" in proposal.summary
    assert "a + b" in git(repo, "show", f"HEAD:{path}")


async def test_unittest_a_wrong_first_fix_goes_to_the_fix_loop(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    from tests.engine.test_unittest_sessions import ADD as UT_ADD
    from tests.engine.test_unittest_sessions import TESTS, unittest_project

    repo = unittest_project(make_repo, monkeypatch)  # its own venv, no pytest in it
    path = "calc/__init__.py"
    wrong = edit(path, f"{UT_ADD}    return a - b\n", f"{UT_ADD}    return a * b\n")
    right = edit(path, f"{UT_ADD}    return a * b\n", f"{UT_ADD}    return a + b\n")
    scripted_server.script(Reply(text=wrong), Reply(text="add multiplies."), Reply(text=right))
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, sandbox="local"
    )
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 3
    assert seen.of(ev.TestsFinished)[0].failing == (f"{TESTS}test_add",)
    (proposal,) = seen.of(ev.ProposalReady)
    # test_sub passes, test_mul was red at the start and is not this step's.
    assert proposal.fixed == (f"{TESTS}test_add",)
    assert proposal.old_failures == (f"{TESTS}test_mul",)


@whole_session
async def test_a_fix_request_waits_for_the_list_of_failures_only_so_long(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """A suite slower than fix_list_wait: the model is asked without the list (said once), and
    the step is still judged by the old failure it is meant to fix."""
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(4)\n"
    repo, command = calc_repo({**CALC, "tests/test_slow.py": slow})
    command = command.removesuffix(" -q")  # as detected: pytest's default lines, file by file
    scripted_server.script(
        Reply(text=WRONG), Reply(text="add multiplies: 2 * 3 is 6."), Reply(text=RIGHT)
    )
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, test_command=command,
        sandbox="local", fix_list_wait=0.5,
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    propose = scripted_server.chat_requests[0].messages[-1]["content"]
    assert ADD_ID not in propose  # asked before the starting commit's run ended
    notices = [e.message for e in seen.of(ev.Notice) if "still run after 0.5 s" in e.message]
    assert len(notices) == 1
    # Judged all the same: the wrong first fix went to the fix loop, the right one commits.
    assert len(scripted_server.chat_requests) == 3
    assert ADD_ID in scripted_server.chat_requests[2].messages[-1]["content"]
    assert "return a + b" in git(repo, "show", "HEAD:calc.py")
