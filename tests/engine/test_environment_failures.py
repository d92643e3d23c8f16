"""Environment failures are not code failures (issue 18, section 3): a step whose tests fail
because something is missing where they run stops and says what, instead of asking the model
for fixes. The repo's tests run in its own venv (pytest only) in the local sandbox."""

from __future__ import annotations

import io

import pytest

from tests.engine_support import create, run_headless
from tests.env_support import activate, project_venv
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter
from tui_engineer.verify.report import FailingTest, TestReport
from tui_engineer.verify.setup_failures import environment_problem

FILES = {
    ".gitignore": ".venv/\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
PROPERTY_TEST = create(
    "tests/test_props.py",
    "from hypothesis import given, strategies as st\n\nfrom calc import add\n\n\n"
    "@given(st.integers(), st.integers())\ndef test_add_commutes(a, b):\n"
    "    assert add(a, b) == add(b, a)\n",
)


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_module_nobody_installed_stops_the_step_with_what_is_missing(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, pytest_wheels
) -> None:
    repo = make_repo(FILES)
    command = activate(monkeypatch, project_venv(repo, pytest_wheels))
    scripted_server.script(Reply(text=PROPERTY_TEST))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "add a property test", scripted_server.base_url, test_command=command,
        sandbox="local", plan=False, sink=ProgressPrinter(out),
    )  # fmt: skip
    assert result.exit_code == 1 and not result.commits
    assert len(scripted_server.chat_requests) == 1  # no diagnosis, no fix attempts
    (proposal,) = seen.of(ev.ProposalReady)
    assert any("`hypothesis` is not installed" in note for note in proposal.notes)
    assert "the test environment is missing something" in out.getvalue()


def _failed(tail: str, exit_code: int = 1) -> TestReport:
    return TestReport("pytest", exit_code, 0.1, False, failed=1, structured=True, output_tail=tail,
                      failures=[FailingTest("tests/test_x.py::test_x", "boom", tail)])  # fmt: skip


def test_a_program_not_found_is_the_environments() -> None:
    problem = environment_problem(_failed("sh: 1: frobnicate: not found"), ["x.py"])
    assert problem is not None and "`frobnicate`" in problem


def test_a_missing_module_of_the_repository_is_the_codes() -> None:
    tail = "ModuleNotFoundError: No module named 'calc'"
    assert environment_problem(_failed(tail), ["calc.py", "tests/test_x.py"]) is None
    assert environment_problem(_failed(tail), ["tests/test_x.py"]) is not None


def test_a_missing_file_is_the_environments_only_when_git_ignores_it() -> None:
    tail = "FileNotFoundError: [Errno 2] No such file or directory: 'data/big.bin'"
    assert environment_problem(_failed(tail), [], ignored=["data/big.bin"]) is not None
    assert environment_problem(_failed(tail), [], ignored=[]) is None
