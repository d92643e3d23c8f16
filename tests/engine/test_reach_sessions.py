"""Verification by reach (issue 45): requests phrased as users phrase them, not "fix X", with a
test red at the start that the step's change runs through and a model whose first answer is
wrong. The wrong answer goes to the fix loop, the right one is committed, and nothing is ever
called "tests passed" while a failure the change runs through is red. Each repository's tests
run with its own runner in the local sandbox, over real HTTP to a scripted model."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine.test_fix_old_failure import ADD_ID, CARGO, NODE, NODE_FILES, RUST
from tests.engine.test_fix_old_failure import calc_repo as calc_repo  # a fixture
from tests.engine_support import edit, run_headless
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify.targets import fix_intent

pytestmark = pytest.mark.usefixtures("api_key")

ADD = "def add(a, b):\n"
RIGHT = edit("calc.py", f"{ADD}    return a - b\n", f"{ADD}    return a + b\n")
TRACEBACK = (
    "tests/test_calc.py:5: in test_add\n    assert add(2, 3) == 5\n"
    "E   assert -1 == 5\nE    +  where -1 = add(2, 3)\nFAILED tests/test_calc.py::test_add"
)
# request: the first (wrong) body of add
PHRASINGS = {
    "Make add return the sum": "    # the sum of a and b\n    return a - b\n",
    "add() should give a + b for two numbers": "    return b - a\n",
    "The add function subtracts instead of adding.": "    return abs(a - b)\n",
    f"I get this when I run the tests:\n{TRACEBACK}": "    return -(a - b) - 2 * b + b\n",
    "When I call add(2, 3) I get -1. I expected 5.": "    return (a - b) * 1\n",
    "### add gives the wrong result\n\nSteps: `add(2, 3)`.\nExpected: 5.\nActual: -1.\n": (
        "    return a - b  # per the issue\n"
    ),
}


async def _session(repo: Path, command: str, request: str, server: ScriptedServer, **flags):
    out = io.StringIO()
    result, seen = await run_headless(
        repo, request, server.base_url, plan=False, test_command=command, sandbox="local",
        sink=ProgressPrinter(out), **flags,
    )  # fmt: skip
    return result, seen, out.getvalue()


def _wrong_then_right(path: str, head: str, old: str, wrong: str, right: str) -> list[Reply]:
    return [
        Reply(text=edit(path, f"{head}{old}", f"{head}{wrong}")),
        Reply(text="add still does not add."),
        Reply(text=edit(path, f"{head}{wrong}", f"{head}{right}")),
    ]


async def test_make_add_return_the_sum_with_a_wrong_first_answer_commits_only_the_right_one(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """The first row of the issue's table, in the quick tier: no fix word in the request."""
    await _phrasing(calc_repo, scripted_server, "Make add return the sum")


@whole_session
@pytest.mark.parametrize("request_", list(PHRASINGS)[1:])
async def test_each_phrasing_sends_a_wrong_first_answer_to_the_fix_loop(
    request_: str, calc_repo, scripted_server: ScriptedServer
) -> None:
    await _phrasing(calc_repo, scripted_server, request_)


async def _phrasing(calc_repo, server: ScriptedServer, request: str) -> None:
    repo, command = calc_repo()
    server.script(*_wrong_then_right("calc.py", ADD, "    return a - b\n",
                                     PHRASINGS[request], "    return a + b\n"))  # fmt: skip
    result, seen, printed = await _session(repo, command, request, server)
    assert result.exit_code == 0, printed
    assert len(server.chat_requests) == 3, printed  # propose, diagnose, fix
    # The model knew before its first answer: the propose call waited for the baseline.
    assert ADD_ID in server.chat_requests[0].messages[-1]["content"]
    first = seen.of(ev.TestsFinished)[0]
    assert not first.ok and ADD_ID in first.failing, printed
    fix_prompt = server.chat_requests[2].messages[-1]["content"]
    assert ADD_ID in fix_prompt
    if not fix_intent(request):  # no word points at it: it is the step's by reach alone
        assert "your change runs through them" in fix_prompt
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.fixed == (ADD_ID,)
    assert printed.count("accepted: auto (tests passed)") == 1
    assert "return a + b" in git(repo, "show", "HEAD:calc.py")


async def test_a_docstring_for_add_with_test_add_red_is_never_tests_passed(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """ "Add a docstring to add": the change runs through test_add, red at the start. It goes to
    the fix loop; the model says it is not this step's, with a reason the human sees and the
    commit keeps; the accept is not "tests passed"."""
    repo, command = calc_repo()
    doc = edit("calc.py", ADD, f'{ADD}    """The sum of a and b."""\n')
    why = "this step documents add; its subtraction is a bug of its own"
    scripted_server.script(
        Reply(text=doc),
        Reply(text="test_add failed before this step too."),
        Reply(text=f"NOT THIS STEP'S: {ADD_ID}: {why}\n"),
    )
    result, seen, printed = await _session(repo, command, "Add a docstring to add", scripted_server)
    assert result.exit_code == 0, printed
    assert len(scripted_server.chat_requests) == 3
    first = seen.of(ev.TestsFinished)[0]
    assert not first.ok and ADD_ID in first.failing  # not hidden among the old ones
    (proposal,) = seen.of(ev.ProposalReady)
    assert ADD_ID in proposal.still_failing and "not this step's says the model" in proposal.summary
    assert "tests passed" not in printed
    assert f"accepted: auto (tests pass but for {ADD_ID}" in printed
    assert f"Not this step's, says the model: {why}" in printed
    body = git(repo, "log", "-1", "--format=%B")
    assert why in body and ADD_ID in body
    assert "The sum of a and b" in git(repo, "show", "HEAD:calc.py")


@whole_session
async def test_a_model_cannot_disown_a_test_its_change_broke(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    repo, command = calc_repo()
    mul_id = "tests/test_calc.py::test_mul"
    broke = edit("calc.py", "    return a * b\n", "    return a ** b\n")
    scripted_server.script(
        Reply(text=broke),
        Reply(text="mul changed."),
        Reply(text=f"NOT THIS STEP'S: {mul_id}: not mine\n"),
    )
    result, _, printed = await _session(
        repo, command, "make mul faster", scripted_server, max_fix_attempts=1
    )
    assert result.exit_code == 1 and not result.commits, printed
    assert "tests passed" not in printed


@whole_session
async def test_a_refused_claim_beside_an_edit_is_answered_in_the_next_fix(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """The claim rides with a (still wrong) edit: the edit is tried, and the next fix request
    says why the claim was not taken, instead of passing over it in silence."""
    repo, command = calc_repo()
    mul_id = "tests/test_calc.py::test_mul"
    mul = "def mul(a, b):\n"
    scripted_server.script(
        Reply(text=edit("calc.py", f"{mul}    return a * b\n", f"{mul}    return a ** b\n")),
        Reply(text="mul powers."),
        Reply(
            text=edit("calc.py", f"{mul}    return a ** b\n", f"{mul}    return b ** a\n")
            + f"\nNOT THIS STEP'S: {mul_id}: not mine\n"
        ),
        Reply(text="mul still powers."),
        Reply(text=edit("calc.py", f"{mul}    return b ** a\n", f"{mul}    return b * a\n")),
    )
    result, _, printed = await _session(repo, command, "make mul faster", scripted_server)
    assert result.exit_code == 0, printed
    fifth = scripted_server.chat_requests[4].messages[-1]["content"]
    assert f"Not set aside: {mul_id}" in fifth


@whole_session
async def test_an_old_failure_the_change_does_not_run_through_costs_no_call(
    calc_repo, scripted_server: ScriptedServer
) -> None:
    """toolz's kind, with a request that shares its module's name: calc's test_add is red,
    the step changes mul only. One call, committed, test_add shown apart."""
    repo, command = calc_repo()
    doc = edit("calc.py", "def mul(a, b):\n", 'def mul(a, b):\n    """a times b"""\n')
    scripted_server.script(Reply(text=doc))
    result, seen, printed = await _session(
        repo, command, "the calc module's mul needs a docstring; fix it", scripted_server
    )
    assert result.exit_code == 0, printed
    assert len(scripted_server.chat_requests) == 1
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.old_failures == (ADD_ID,) and proposal.still_failing == ()


@whole_session
async def test_unittest_area_should_multiply_width_by_height(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    from tests.engine.test_unittest_sessions import unittest_project

    area = "def area(w, h):\n"
    files = {
        ".gitignore": ".venv/\n",
        "shapes/__init__.py": f"{area}    return w + h\n",
        "tests/__init__.py": "",
        "tests/test_shapes.py": "import unittest\n\nfrom shapes import area\n\n\n"
        "class ShapeTests(unittest.TestCase):\n    def test_area(self):\n"
        "        self.assertEqual(area(2, 3), 6)\n",
    }
    repo = unittest_project(make_repo, monkeypatch, files)
    path = "shapes/__init__.py"
    replies = _wrong_then_right(path, area, "    return w + h\n", "    return w ** h\n",
                                "    return w * h\n")  # fmt: skip
    scripted_server.script(*replies)
    result, seen = await run_headless(
        repo, "area should multiply width by height", scripted_server.base_url, plan=False,
        sandbox="local",
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 3
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.fixed == ("tests/test_shapes.py::ShapeTests::test_area",)
    assert "w * h" in git(repo, "show", f"HEAD:{path}")


@whole_session
@pytest.mark.parametrize(
    ("runner", "request_"),
    [("cargo", "add should sum its two arguments"), ("node", "Make add return the sum")],
)
async def test_other_runners_a_wrong_first_answer_to_a_plain_request(
    runner: str, request_: str, make_repo, scripted_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    tool = {"cargo": CARGO, "node": NODE}[runner]
    if tool is None:
        pytest.skip(f"{runner} is not installed")
    if runner == "cargo" and shutil.which("cargo") is None:
        monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ['PATH']}")
    files, path, line = {
        "cargo": (RUST, "src/lib.rs", "    a OP b\n}\n"),
        "node": (NODE_FILES, "calc.js", "exports.add = (a, b) => a OP b;\n"),
    }[runner]
    repo = make_repo(files)
    wrong = line.replace("a OP b", "b - a")
    scripted_server.script(
        Reply(text=edit(path, line.replace("OP", "-"), wrong)),
        Reply(text="add still subtracts."),
        Reply(text=edit(path, wrong, line.replace("OP", "+"))),
    )
    result, seen = await run_headless(repo, request_, scripted_server.base_url, plan=False)
    assert result.exit_code == 0, result.message
    assert len(scripted_server.chat_requests) == 3
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == ()
    assert "a + b" in git(repo, "show", f"HEAD:{path}")
