"""A Python project whose tests are unittest's, in its own virtualenv with no pytest in it (made
with `python -m venv`, nothing installed), activated as a user has it: the test command is
found as `python -m unittest` (not `python -m pytest`, which cannot start there), its results
are read test by test, and a failure that was there before the session is told from one the
step makes. The model is scripted over real HTTP; the tests run under bubblewrap."""

from __future__ import annotations

import io
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine.test_baseline import more_itertools_sdist as more_itertools_sdist  # a fixture
from tests.engine_support import AFFECTED_AT_ONCE, edit, run_headless
from tests.env_support import project_venv
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

TESTS = "tests/test_calc.py::CalcTests::"
FILES = {
    ".gitignore": ".venv/\n",
    "calc/__init__.py": (
        "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a + b\n"
    ),
    "tests/__init__.py": "",
    "tests/test_calc.py": (
        "import unittest\n\nfrom calc import add, mul, sub\n\n\n"
        "class CalcTests(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n"
        "    def test_sub(self):\n        self.assertEqual(sub(3, 1), 2)\n\n"
        "    def test_mul(self):\n        self.assertEqual(mul(4, 3), 12)\n"
    ),
}
ADD = "def add(a, b):\n"
FIX_ADD = edit("calc/__init__.py", f"{ADD}    return a - b\n", f"{ADD}    return a + b\n")
SUB = "def sub(a, b):\n"
BREAK_SUB = edit("calc/__init__.py", f"{SUB}    return a - b\n", f"{SUB}    return b\n")


pytestmark = pytest.mark.usefixtures("api_key")


def unittest_project(make_repo, monkeypatch: pytest.MonkeyPatch, files=FILES) -> Path:
    """The repository with its own .venv (no pytest in it), activated: VIRTUAL_ENV set and its
    bin/ first on PATH, as `source .venv/bin/activate` leaves them."""
    repo = make_repo(files)
    venv = project_venv(repo, [])  # no wheels: nothing installed in it
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ.get("PATH", ""))
    return repo


def words(text: str) -> str:
    """`text` without its paths (this suite's temporary folders are named for pytest)."""
    return re.sub(r"/\S+", "", text)


async def _session(repo: Path, server: ScriptedServer, request: str, **flags):
    out = io.StringIO()
    result, seen = await run_headless(
        repo, request, server.base_url, sandbox="local", plan=False,
        sink=ProgressPrinter(out), **flags,
    )  # fmt: skip
    return result, seen, out.getvalue()


async def test_a_fix_commits_and_the_old_failure_is_named_by_unittest(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    repo = unittest_project(make_repo, monkeypatch)
    scripted_server.script(Reply(text=FIX_ADD))
    result, seen, out = await _session(repo, scripted_server, "fix add")
    assert result.exit_code == 0, out
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
    assert len(scripted_server.chat_requests) == 1
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == "python -m unittest"
    assert baseline.failing == (f"{TESTS}test_add", f"{TESTS}test_mul")
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (f"{TESTS}test_mul",)
    assert "2 passed, 1 failed" in proposal.summary
    assert f"1 failing before this session: {TESTS}test_mul" in out
    assert "pytest" not in words(out)


async def test_a_test_the_step_breaks_is_new_and_the_model_hears_only_of_it(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    repo = unittest_project(make_repo, monkeypatch)
    scripted_server.script(Reply(text=BREAK_SUB), Reply(text="sub is wrong"), Reply(text="no"))
    result, seen, out = await _session(repo, scripted_server, "simplify sub", max_fix_attempts=1)
    assert result.exit_code == 1 and not result.commits
    assert seen.of(ev.TestsFinished)[0].failing == (f"{TESTS}test_sub",)
    diagnose = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "test_sub" in diagnose and "AssertionError: 1 != 2" in diagnose
    assert "test_mul" not in diagnose and "pytest" not in words(diagnose)


async def test_a_suite_unittest_finds_nothing_in_stops_in_unittests_words(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    """Plain test functions, no TestCase: unittest runs no test. The stop names unittest and
    says nothing of pytest, or of activating the virtualenv that is active."""
    files = {**FILES, "tests/test_calc.py": "import unittest\n\n\ndef test_add():\n    pass\n"}
    repo = unittest_project(make_repo, monkeypatch, files)
    scripted_server.script(Reply(text=FIX_ADD))
    result, seen, out = await _session(repo, scripted_server, "fix add")
    assert result.exit_code == 2
    (failed,) = seen.of(ev.BaselineFailed)
    assert failed.command == "python -m unittest"
    assert "unittest found no tests" in result.message
    assert "make sure unittest runs in the active virtualenv" in result.message
    assert "pytest" not in words(result.message) and "activate the" not in result.message


def test_the_advice_for_another_runner_names_it() -> None:
    from tui_engineer.verify.baseline import start_failure_message
    from tui_engineer.verify.report import TestReport

    report = TestReport("cargo test", 127, 0.1, False, output_tail="sh: 1: cargo: not found")
    message = start_failure_message("cargo test", "its program could not be started", report)
    assert "make sure cargo test is installed and on PATH" in message
    assert "pytest" not in message and "virtualenv" not in message


RUNTESTS = (
    "import os\nimport sys\nimport unittest\n\n"
    "here = os.path.dirname(os.path.abspath(__file__))\n"
    "sys.path.insert(0, os.path.dirname(here))\n"
    "suite = unittest.defaultTestLoader.discover(here)\n"
    "sys.exit(not unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful())\n"
)
TOX_PROJECT = {
    **{k: v for k, v in FILES.items() if k != "tests/__init__.py"},
    "tox.ini": "[tox]\nenvlist = py3, lint\n\n[testenv]\ndeps = -e .\n"
    "commands =\n    {envpython} tests/runtests.py {posargs}\n\n"
    "[testenv:lint]\ncommands = ruff check .\n",
    "tests/runtests.py": RUNTESTS,
    "package.json": '{"scripts": {"test": "eslint . && grunt test"}}',  # for its JavaScript
}


async def test_the_script_tox_runs_is_the_test_command_and_its_report_is_read(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    """Django's shape: tox.ini runs tests/runtests.py (which prints unittest's report); the
    package.json for its JavaScript has a test script that runs eslint, not the tests."""
    repo = unittest_project(make_repo, monkeypatch, TOX_PROJECT)
    scripted_server.script(Reply(text=FIX_ADD))
    result, seen, out = await _session(repo, scripted_server, "fix add")
    assert result.exit_code == 0, out
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == "python tests/runtests.py"
    assert baseline.failing == (f"{TESTS}test_add", f"{TESTS}test_mul")
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (f"{TESTS}test_mul",)
    assert "eslint" not in out and git(repo, "log", "-1", "--format=%s") == "fix add"


TAKE_TEST = "tests/test_recipes.py::TakeTests::test_simple_take"


@pytest.mark.slow  # its 929 tests run twice: 37 s of CPU each (8 min in all at load 14)
async def test_more_itertools_runs_the_unittest_its_tox_ini_declares_in_a_venv_without_pytest(
    more_itertools_sdist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    scripted_server: ScriptedServer,
) -> None:  # fmt: skip
    """A real project from the package index, nobody here wrote it: its tox.ini runs
    `{envpython} -m unittest -v`; one of its tests fails before the session."""
    repo = tmp_path / "more-itertools"
    shutil.copytree(more_itertools_sdist, repo)
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "\n.venv/\n")
    tests = repo / "tests" / "test_recipes.py"
    tests.write_text(
        tests.read_text().replace(
            "self.assertEqual(t, [0, 1, 2, 3, 4])", "self.assertEqual(t, [0, 1, 2, 3])", 1
        )
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more-itertools 11.2.1, a test that fails")
    venv = project_venv(repo, [])
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ.get("PATH", ""))
    # tail's docstring: a change test_simple_take does not run through (engine/steps/reach.py), so
    # that old failure never blocks and costs no call (a change inside take would reach it).
    docstring = edit(
        "more_itertools/recipes.py",
        '    """Return an iterator over the last *n* items of *iterable*.\n',
        '    """Return an iterator over the last *n* items of the *iterable*.\n',
    )
    scripted_server.script(Reply(text=docstring))
    result, seen, out = await _session(
        repo, scripted_server, "fix the grammar of tail's docstring", test_timeout=600
    )
    assert result.exit_code == 0, out
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command == "python -m unittest -v"
    assert baseline.failing == (TAKE_TEST,)
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and proposal.old_failures == (TAKE_TEST,)
    assert f"1 failing before this session: {TAKE_TEST}" in out
    assert len(scripted_server.chat_requests) == 1


async def test_the_changed_modules_unittest_tests_run_first(
    make_repo, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    other = (
        "import unittest\n\n\nclass Other(unittest.TestCase):\n"
        "    def test_it(self):\n        pass\n"
    )
    repo = unittest_project(make_repo, monkeypatch, {**FILES, "tests/test_other.py": other})
    scripted_server.script(Reply(text=FIX_ADD))
    result, seen, out = await _session(repo, scripted_server, "fix add", **AFFECTED_AT_ONCE)
    assert result.exit_code == 0, out
    assert [e.scope for e in seen.of(ev.TestsStarted)] == ["affected", "full"]
    finished = [(e.passed, e.failed) for e in seen.of(ev.TestsFinished)]
    # tests.test_calc's three (test_mul failed before the session), then all four.
    assert finished == [(2, 1), (3, 1)]
