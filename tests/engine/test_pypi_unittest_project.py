"""A real project from the package index that nobody here wrote, tested the way its authors
test it (issue 33, "Tests in users' conditions"): idna 3.10's source release has unittest tests
and no tox.ini, nox or pytest config, so the runner is found from its files; its own venv has
nothing installed (no pytest). The starting commit is red (a bug put into `intranges_contain`:
8 of its 6,256 tests fail), and the model's first fix is wrong: the fix loop runs, the right fix
commits, and the review says which old failures now pass."""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, edit, run_headless
from tests.env_support import project_venv, unpacked_sdist
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

pytestmark = pytest.mark.slow  # a download from the package index, and 6,256 tests per run

IDNA = "idna==3.10"
RANGES = "idna/intranges.py"
LINE = "        if left OP int_ < right:\n"


@pytest.fixture(scope="module")
def idna_sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpacked_sdist(tmp_path_factory.mktemp("idna"), IDNA)


def _swap(old: str, new: str) -> str:
    return edit(RANGES, LINE.replace("OP", old), LINE.replace("OP", new))


async def test_a_wrong_first_fix_in_idna_goes_to_the_fix_loop_and_the_right_one_commits(
    idna_sdist: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    scripted_server: ScriptedServer,
) -> None:  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = tmp_path / "idna"
    shutil.copytree(idna_sdist, repo)
    (repo / ".gitignore").write_text(".venv/\n")
    source = repo / RANGES
    good = LINE.replace("OP", "<=")
    assert good in source.read_text()
    source.write_text(source.read_text().replace(good, good.replace("< right", "<= right")))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "idna 3.10, intranges_contain taking the range's end")
    venv = project_venv(repo, [])  # nothing installed: no pytest
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ.get("PATH", ""))
    bug = LINE.replace("OP", "<=").replace("< right", "<= right")
    wrong = edit(RANGES, bug, bug.replace("left <=", "left <"))  # still takes the end
    right = edit(RANGES, bug.replace("left <=", "left <"), good)
    scripted_server.script(Reply(text=wrong), Reply(text="The end is taken."), Reply(text=right))
    out = io.StringIO()
    started = time.monotonic()
    result, seen = await run_headless(
        repo, "fix intranges_contain: make the failing tests pass", scripted_server.base_url,
        plan=False, sandbox="local", sink=ProgressPrinter(out),
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert result.exit_code == 0, out.getvalue()
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.command.endswith("-m unittest") and len(baseline.failing) == 8
    assert all(i.startswith("tests/test_") and "::" in i for i in baseline.failing)
    assert len(scripted_server.chat_requests) == 3  # propose, diagnose, fix
    (proposal,) = seen.of(ev.ProposalReady)
    assert proposal.tests_ok and set(proposal.fixed) == set(baseline.failing)
    assert "now passes: " in proposal.summary
    assert good in git(repo, "show", f"HEAD:{RANGES}")
    print(f"idna session: {len(scripted_server.chat_requests)} model calls, {seconds:.1f} s")
