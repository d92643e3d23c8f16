"""`tui-engineer run --yes` on the calc project declaring ruff in pyproject.toml, ruff installed
in its own .venv: the check is listed at the start beside the test command, the first answer's
unused import goes back to the model with ruff's words, and the fixed step is committed, one
more model call; a line per check run in the text output, `check_finished` events in --json.
The real command, real ruff and pytest, the model over HTTP."""

from __future__ import annotations

import json

from tests.checks_support import RUFF_PROJECT, TESTS, tool_venv
from tests.checks_support import ruff_wheels as ruff_wheels  # a fixture
from tests.conftest import git
from tests.engine.test_project_checks import DROP_OS, FIX_WITH_OS
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import run_answering

FLAGS = ("--yes", "--no-plan", "--full-tests-always", "--test-cmd", TESTS)


@whole_session
def test_yes_commits_the_step_fixed_after_ruff_found_an_unused_import(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    scripted_server.script(Reply(text=FIX_WITH_OS), Reply(text=DROP_OS))

    done = run_answering(repo, scripted_server, "fix add", "", *FLAGS)

    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    listed = (
        "note: The project's own checks run on each step with the tests: ruff check "
        "(pyproject.toml [tool.ruff]; ruff from the repository's own .venv/)."
    )
    assert listed in out
    assert "✗ ruff check: 1 new finding (sent to the model to fix)" in out
    assert "F401" in out and "✓ ruff check: passed" in out
    assert len(scripted_server.chat_requests) == 2
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
    assert "import os" not in (repo / "calc.py").read_text()


@whole_session
def test_json_has_an_event_per_check_run(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    scripted_server.script(Reply(text=FIX_WITH_OS), Reply(text=DROP_OS))

    done = run_answering(repo, scripted_server, "fix add", "", *FLAGS, "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    started = next(e for e in events if e["type"] == "session_started")
    assert started["checks"][0].startswith("ruff check (")
    checks = [e for e in events if e["type"] == "check_finished"]
    ran = [(e["check"], e["ok"], e["new"]) for e in checks]
    assert ran == [("ruff", False, 1), ("ruff", True, 0)]
    assert "`os` imported but unused" in checks[0]["output"]


@whole_session
def test_yes_does_not_accept_a_step_whose_new_finding_stays(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    # The model keeps the import: its fix changes nothing, and the loop stops.
    scripted_server.script(Reply(text=FIX_WITH_OS), Reply(text="The import is fine as it is."))

    done = run_answering(repo, scripted_server, "fix add", "", *FLAGS, "--max-fix-attempts", "1")

    assert done.returncode != 0, done.stdout
    assert "accepted: auto" not in done.stdout
    assert "could not be made to pass (ruff check: 1 new finding in" in done.stdout
    assert git(repo, "log", "-1", "--format=%s") == "initial"
    assert "import os" not in (repo / "calc.py").read_text()
