"""The checks a project declares run on each step before review, judged against the starting
commit: a new finding goes back to the model with the tool's own words, an old one never blocks,
a formatter's rewrite is folded into the step, a check declared but not installed is said once.
Real headless sessions on the calc repo, ruff and mypy installed in the repository's own .venv
(not this suite's environment), real pytest runs, the model over HTTP."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.checks_support import RUFF_PROJECT, TESTS, tool_venv
from tests.checks_support import mypy_wheels as mypy_wheels  # a fixture
from tests.checks_support import ruff_wheels as ruff_wheels  # a fixture
from tests.conftest import git, write_hook
from tests.engine_support import edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

pytestmark = pytest.mark.usefixtures("api_key")

# The first answer fixes add but leaves an unused `import os`; the second removes it.
FIX_WITH_OS = edit(
    "calc.py",
    "def add(a, b):\n    return a - b\n",
    "import os\n\n\ndef add(a, b):\n    return a + b\n",
)
DROP_OS = edit("calc.py", "import os\n\n\ndef add(a, b):\n", "def add(a, b):\n")
FIX = edit("calc.py", "    return a - b\n", "    return a + b\n")


def _checks(seen, name: str) -> list[ev.CheckFinished]:
    return [e for e in seen.of(ev.CheckFinished) if e.name == name]


async def _fix_add(repo: Path, server: ScriptedServer, *replies: str):
    server.script(*(Reply(text=r) for r in replies))
    result, seen = await run_headless(
        repo, "fix add", server.base_url, plan=False, test_command=TESTS
    )
    assert result.outcome == "done", result.message
    return seen


@whole_session
async def test_an_unused_import_ruff_finds_goes_to_the_fix_loop_and_the_fixed_step_commits(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    seen = await _fix_add(repo, scripted_server, FIX_WITH_OS, DROP_OS)
    started = seen.of(ev.SessionStarted)[0]
    assert any(c.startswith("ruff check (pyproject.toml [tool.ruff]") for c in started.checks)
    assert ".venv/" in started.checks[0]  # the repository's own ruff, not ours
    assert len(scripted_server.chat_requests) == 2  # one more call, with ruff's own words
    assert "F401" in str(scripted_server.chat_requests[1]) and "`os` imported but unused" in str(
        scripted_server.chat_requests[1]
    )
    assert [e.ok for e in _checks(seen, "ruff check")] == [False, True]
    assert _checks(seen, "ruff check")[0].new == 1
    assert git(repo, "log", "-1", "--format=%s") == "fix add"
    assert "import os" not in (repo / "calc.py").read_text()


@whole_session
async def test_a_finding_already_on_the_starting_commit_never_blocks(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    old = "import sys\n\n\ndef add(a, b):\n    return a - b\n"
    repo = make_repo({**RUFF_PROJECT, "calc.py": old})
    tool_venv(repo, ruff_wheels)
    seen = await _fix_add(repo, scripted_server, FIX)
    assert len(scripted_server.chat_requests) == 1
    (ran,) = _checks(seen, "ruff check")
    assert ran.ok and ran.old == 1 and ran.new == 0 and "before this session" in ran.summary
    assert "return a + b" in (repo / "calc.py").read_text()


@whole_session
async def test_a_formatters_rewrite_is_folded_into_the_step_and_said(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    pyproject = RUFF_PROJECT["pyproject.toml"] + "\n[tool.ruff.format]\nquote-style = 'double'\n"
    repo = make_repo({**RUFF_PROJECT, "pyproject.toml": pyproject})
    tool_venv(repo, ruff_wheels)
    seen = await _fix_add(
        repo, scripted_server, edit("calc.py", "    return a - b\n", "    return a+b\n")
    )
    assert len(scripted_server.chat_requests) == 1
    (formatted,) = _checks(seen, "ruff format")
    assert formatted.ok and "rewrote calc.py" in formatted.summary
    proposed = seen.of(ev.ProposalReady)[-1]
    assert "formatted by ruff format: calc.py" in str(proposed)
    assert "+    return a + b" in str(proposed)  # the diff the human reviews is formatted
    assert "return a + b\n" in (repo / "calc.py").read_text()


LOCAL_HOOK = """repos:
  - repo: local
    hooks:
      - id: no-os
        name: no import os
        entry: scripts/no_os.sh
        language: script
        types: [python]
"""
NO_OS = """#!/bin/sh
status=0
for f in "$@"; do
  if grep -n '^import os' "$f" >/dev/null; then echo "$f:1: do not import os here"; status=1; fi
done
exit $status
"""


@whole_session
async def test_a_pre_commit_framework_local_hook_runs_without_pre_commit(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(
        {**RUFF_PROJECT, ".pre-commit-config.yaml": LOCAL_HOOK, "scripts/no_os.sh": NO_OS}
    )
    (repo / "scripts/no_os.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hook executable")
    seen = await _fix_add(repo, scripted_server, FIX_WITH_OS, DROP_OS)
    assert [e.ok for e in _checks(seen, "no import os")] == [False, True]
    assert "calc.py:1: do not import os here" in str(scripted_server.chat_requests[1])
    assert "import os" not in (repo / "calc.py").read_text()


@whole_session
async def test_mypy_from_the_repositorys_venv_sends_a_type_error_back(
    make_repo, scripted_server: ScriptedServer, mypy_wheels
) -> None:
    pyproject = RUFF_PROJECT["pyproject.toml"].replace(
        "[tool.ruff]\nline-length = 100\n", "[tool.mypy]\n"
    )
    repo = make_repo({**RUFF_PROJECT, "pyproject.toml": pyproject})
    tool_venv(repo, mypy_wheels)
    typed = "def add(a: int, b: int) -> str:\n    return a + b\n"
    first = edit("calc.py", "def add(a, b):\n    return a - b\n", typed)
    second = edit("calc.py", typed, typed.replace("-> str", "-> int"))
    seen = await _fix_add(repo, scripted_server, first, second)
    assert [e.ok for e in _checks(seen, "mypy")] == [False, True]
    assert "Incompatible return value type" in str(scripted_server.chat_requests[1])
    assert "-> int:" in (repo / "calc.py").read_text()


@whole_session
async def test_a_check_declared_but_not_installed_is_said_once_and_the_session_goes_on(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No mypy anywhere the session may look: not in the repository, not on PATH.
    path = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "mypy").exists()
    )
    monkeypatch.setenv("PATH", path)
    pyproject = RUFF_PROJECT["pyproject.toml"].replace(
        "[tool.ruff]\nline-length = 100\n", "[tool.mypy]\n"
    )
    repo = make_repo({**RUFF_PROJECT, "pyproject.toml": pyproject})
    seen = await _fix_add(repo, scripted_server, FIX)
    said = [e.message for e in seen.of(ev.Notice) if "mypy" in e.message]
    assert len(said) == 1 and "not installed" in said[0], said
    assert not seen.of(ev.CheckFinished)
    assert git(repo, "log", "-1", "--format=%s") == "fix add"


HANGS = """repos:
  - repo: local
    hooks:
      - id: slow-lint
        entry: sleep 60
        language: system
        pass_filenames: false
"""


@whole_session
async def test_a_check_that_hangs_is_cut_by_its_own_timeout_and_not_judged(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo({**RUFF_PROJECT, ".pre-commit-config.yaml": HANGS})
    scripted_server.script(Reply(text=FIX))
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, test_command=TESTS,
        check_timeout=2.0,
    )  # fmt: skip
    assert result.outcome == "done", result.message
    (ran,) = _checks(seen, "slow-lint")
    assert ran.ok and "timed out" in ran.summary and ran.duration < 30
    assert git(repo, "log", "-1", "--format=%s") == "fix add"


@whole_session
async def test_a_check_that_writes_nothing_runs_beside_the_tests_not_after_them(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    slow = "import time\n\nfrom calc import add\n\n\ndef test_add():\n    time.sleep(3)\n"
    slow += "    assert add(2, 3) == 5\n"
    repo = make_repo({**RUFF_PROJECT, "tests/test_calc.py": slow})
    tool_venv(repo, ruff_wheels)
    seen = await _fix_add(repo, scripted_server, FIX)
    order = [
        type(e).__name__
        for e in seen.events
        if isinstance(e, ev.CheckFinished) or (isinstance(e, ev.TestsFinished) and e.step)
    ]
    assert order == ["CheckFinished", "TestsFinished"]  # ruff's answer came during the tests


# The first lines of the hook `pre-commit install` writes (pre-commit 3.x).
FRAMEWORK_HOOK = (
    "# File generated by pre-commit: https://pre-commit.com\n"
    "# ID: 138fd403232d2ddd5efb44317e38bf03\n"
    "exit 0\n"
)


@whole_session
async def test_the_frameworks_own_hook_is_not_run_before_review_its_hooks_are(
    make_repo, scripted_server: ScriptedServer
) -> None:
    # No [tool.ruff]: every check that runs is listed below (a ruff on PATH, as pyenv's shims
    # give one on CI's machine, would be declared by it).
    pyproject = RUFF_PROJECT["pyproject.toml"].replace("[tool.ruff]\nline-length = 100\n", "")
    repo = make_repo(
        {**RUFF_PROJECT, "pyproject.toml": pyproject, ".pre-commit-config.yaml": LOCAL_HOOK,
         "scripts/no_os.sh": NO_OS}
    )  # fmt: skip
    (repo / "scripts/no_os.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hook executable")
    write_hook(repo, "pre-commit", FRAMEWORK_HOOK)
    seen = await _fix_add(repo, scripted_server, FIX_WITH_OS, DROP_OS)
    assert [e.name for e in seen.of(ev.CheckFinished)] == ["no import os", "no import os"]
    said = [e.message for e in seen.of(ev.Notice) if "pre-commit framework" in e.message]
    assert len(said) == 1
    assert git(repo, "log", "-1", "--format=%s") == "fix add"


@whole_session
async def test_a_file_unformatted_on_the_starting_commit_is_not_reformatted(
    make_repo, scripted_server: ScriptedServer, ruff_wheels
) -> None:
    pyproject = RUFF_PROJECT["pyproject.toml"] + "\n[tool.ruff.format]\n"
    old = "def add(a, b):\n    return a - b\n\n\ndef   sub(a,b):\n    return a-b\n"
    repo = make_repo({**RUFF_PROJECT, "pyproject.toml": pyproject, "calc.py": old})
    tool_venv(repo, ruff_wheels)
    seen = await _fix_add(repo, scripted_server, FIX)
    assert not _checks(seen, "ruff format")
    assert "def   sub(a,b):\n    return a-b\n" in (repo / "calc.py").read_text()  # as it was
