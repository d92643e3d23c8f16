"""Narrowed test runs in the project's own environment, where pytest-testmon is usually not
installed: the selection's plumbing failing is never a test failure (issue 18, section 1).

Each repo has its own `.venv` (tests/env_support.py: pytest only, no dev extras) that runs the
tests in the local sandbox; the scripted model answers over real HTTP."""

from __future__ import annotations

import io

import pytest

from tests.engine_support import edit, plan_reply, run_headless
from tests.env_support import VENV_PROJECT, activate, project_venv
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

FILES = {
    **VENV_PROJECT,
    "tests/test_other.py": "def test_other():\n    assert True\n",
}
ADD = edit("calc.py", "    return a + b\n", "    return b + a\n")
SUB = edit("calc.py", "    return a - b\n", "    return -(b - a)\n")

# A testmon that loads (pytest --help lists its options) but fails every run that uses it, as
# an installed one does when its data file comes from another version.
BROKEN_TESTMON = """
import pytest

def pytest_addoption(parser):
    group = parser.getgroup("testmon")
    group.addoption("--testmon", action="store_true")
    group.addoption("--testmon-noselect", action="store_true")

def pytest_configure(config):
    if config.getoption("testmon") or config.getoption("testmon_noselect"):
        raise pytest.UsageError("testmon: the data file was written by another version")
"""


pytestmark = pytest.mark.usefixtures("api_key")


async def _session(repo, server: ScriptedServer, command: str, *replies: str, **flags):
    server.script(*(Reply(text=r) for r in replies))
    flags = {
        "test_command": command,
        "full_tests_always": False,
        "affected_after_seconds": 0,  # narrow this quick suite as if it took seconds
        "sandbox": "local",
        "plan": False,
        **flags,
    }
    return await run_headless(repo, "change calc", server.base_url, **flags)


def _notices(seen) -> list[str]:
    return [n.message for n in seen.of(ev.Notice)]


@whole_session
async def test_without_testmon_the_second_session_narrows_by_name_and_commits(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, pytest_wheels
) -> None:
    repo = make_repo(FILES)
    command = activate(monkeypatch, project_venv(repo, pytest_wheels))
    first, _ = await _session(repo, scripted_server, command, ADD)
    assert first.exit_code == 0
    second, seen = await _session(repo, scripted_server, command, SUB)
    assert second.exit_code == 0, [e.message for e in seen.of(ev.ErrorEvent)]
    assert len(second.commits) == 1
    runs = [(f.scope, f.ok, f.passed) for f in seen.of(ev.TestsFinished)]
    # The tests named for calc.py first (2 of the 3), then the whole suite.
    assert runs == [("affected", True, 2), ("full", True, 3)]
    assert any("by name and imports" in n for n in _notices(seen))
    assert len(scripted_server.chat_requests) == 2  # one edit per session, no fix loop


@whole_session
async def test_a_selection_plugin_that_fails_falls_back_to_the_plain_command_for_the_session(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, pytest_wheels
) -> None:
    repo = make_repo(FILES)
    venv = project_venv(repo, pytest_wheels, plugins={"pytest-testmon": BROKEN_TESTMON})
    command = activate(monkeypatch, venv)
    first, _ = await _session(repo, scripted_server, command, ADD)
    assert first.exit_code == 0
    add_back = edit("calc.py", "    return b + a\n", "    return a + b\n")
    replies = (plan_reply("Change sub", "Change add back"), SUB, add_back)
    second, seen = await _session(repo, scripted_server, command, *replies, plan=True)
    assert second.exit_code == 0, [e.message for e in seen.of(ev.ErrorEvent)]
    assert len(second.commits) == 2
    said = [n for n in _notices(seen) if "narrowing is off" in n]
    assert len(said) == 1, _notices(seen)
    assert "the data file was written by another version" in said[0]
    # The failed narrowed run is no test failure: no fix was asked for.
    assert not seen.of(ev.Diagnosis)
    assert len(scripted_server.chat_requests) == 4  # session 1: 1; session 2: plan + 2 edits
    last = [f for f in seen.of(ev.TestsFinished) if f.step == 2]
    assert [f.scope for f in last] == ["full"]  # step 2 does not try the plugin again


async def test_the_last_lines_of_a_failing_run_show_under_its_progress_line(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    command = "sh -c 'echo collecting; echo the reason it broke >&2; exit 3'"
    out = io.StringIO()
    result, _ = await _session(
        repo, scripted_server, command, ADD, sandbox="none", max_fix_attempts=0,
        sink=ProgressPrinter(out),
    )  # fmt: skip
    assert result.exit_code == 1
    text = out.getvalue()
    lines = text.splitlines()
    failed = next(i for i, line in enumerate(lines) if "✗ tests: exit code 3" in line)
    assert "the reason it broke" in "\n".join(lines[failed + 1 : failed + 4]), text
