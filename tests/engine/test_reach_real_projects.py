"""Verification by reach on a real project nobody here wrote (issue 45): toolz from its source
release, a planted bug in `frequencies` with its test red at the start, an unrelated old failure
in another module, a request in a user's words and a model whose first answer is wrong. The
wrong answer goes to the fix loop (the change runs through test_frequencies), the unrelated old
failure never blocks, and only the right answer is committed."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import edit, run_headless
from tests.env_support import activate, project_venv, unpacked_sdist
from tests.env_support import pytest_wheels as pytest_wheels  # a fixture
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

pytestmark = [pytest.mark.usefixtures("api_key"), pytest.mark.slow]  # a real project's suite

FREQ = "toolz/tests/test_itertoolz.py::test_frequencies"
MERGE = "toolz/tests/test_dicttoolz.py::TestDict::test_merge"
LOOP = "    for item in seq:\n"


@pytest.fixture(scope="module")
def toolz_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpacked_sdist(tmp_path_factory.mktemp("toolz"), "toolz==1.1.0")


async def test_toolz_counting_twice_a_wrong_first_answer_goes_to_the_fix_loop(
    toolz_sdist: Path, tmp_path: Path, scripted_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch, pytest_wheels,
) -> None:  # fmt: skip
    repo = tmp_path / "toolz"
    shutil.copytree(toolz_sdist, repo)
    (repo / ".gitignore").write_text(".venv/\n__pycache__/\n")
    git(repo, "init", "-q", "-b", "main")
    code, tests = repo / "toolz" / "itertoolz.py", repo / "toolz" / "tests" / "test_dicttoolz.py"
    code.write_text(
        code.read_text().replace(f"{LOOP}        d[item] += 1\n", f"{LOOP}        d[item] += 2\n")
    )
    tests.write_text(tests.read_text().replace("D({1: 1, 2: 2, 3: 4})", "D({1: 1, 2: 2, 3: 5})", 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "toolz 1.1.0 with a bug and a stale test")
    command = activate(monkeypatch, project_venv(repo, pytest_wheels))
    path = "toolz/itertoolz.py"
    scripted_server.script(
        Reply(text=edit(path, f"{LOOP}        d[item] += 2\n", f"{LOOP}        d[item] = 2\n")),
        Reply(text="frequencies sets every count to 2."),
        Reply(text=edit(path, f"{LOOP}        d[item] = 2\n", f"{LOOP}        d[item] += 1\n")),
    )
    out = io.StringIO()
    request = "counting how often each item occurs gives twice the right number; fix it"
    result, seen = await run_headless(
        repo, request, scripted_server.base_url, plan=False, test_command=command,
        sandbox="local", sink=ProgressPrinter(out), test_timeout=300,
    )  # fmt: skip
    printed = out.getvalue()
    assert result.exit_code == 0, printed
    assert len(scripted_server.chat_requests) == 3, printed  # propose, diagnose, fix
    first = seen.of(ev.TestsFinished)[0]
    assert FREQ in first.failing and MERGE in first.old_failing, printed  # TestDict's kin too
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and FREQ in proposal.fixed  # test_countby too: it counts with it
    assert MERGE in proposal.old_failures and proposal.still_failing == ()
    assert all("test_dicttoolz" in i for i in proposal.old_failures)
    assert "d[item] += 1" in git(repo, "show", f"HEAD:{path}")
