"""A project tested with zope.testrunner in colour (`zope-testrunner --test-path=src -vc`, as
zope.event's tox.ini runs it), with tests red before the session that the request has nothing
to do with (issue 48, part 5): its report is read test by test, so the old failures are told
apart and the fix commits in one model call, and no colour escape reaches the model's prompt.
zope.testrunner is installed from the package index into the project's own venv."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.verify.test_runner_zope_testrunner import (
    ADD,
    BOOM,
    DOUBLE,
    FILES,
    _venv_with_zope_testrunner,
)
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

pytestmark = pytest.mark.slow  # a venv and zope.testrunner from the package index

COMMAND = "PYTHONPATH=src zope-testrunner --test-path=src -vc"
FIX = edit("src/calc/__init__.py", "    return a - b\n", "    return a + b\n")


async def test_old_failures_under_zope_testrunner_do_not_block_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_server: ScriptedServer
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = tmp_path / "calc"
    for name, text in {**FILES, ".gitignore": ".venv/\n"}.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    venv = _venv_with_zope_testrunner(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "calc, add broken, two unrelated tests red")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    monkeypatch.setenv("PATH", f"{venv}/bin:" + os.environ.get("PATH", ""))
    assert shutil.which("zope-testrunner") == str(venv / "bin" / "zope-testrunner")
    scripted_server.script(Reply(text=FIX))
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "fix add", scripted_server.base_url, plan=False, test_command=COMMAND,
        sandbox="local", sink=ProgressPrinter(out),
    )  # fmt: skip
    assert result.exit_code == 0, out.getvalue()
    (baseline,) = seen.of(ev.BaselineReady)
    assert set(baseline.failing) == {ADD, BOOM, DOUBLE}
    assert len(scripted_server.chat_requests) == 1
    prompt = scripted_server.chat_requests[0].messages[-1]["content"]
    assert "\x1b[" not in prompt
    (proposal,) = seen.of(ev.ProposalReady)
    assert set(proposal.old_failures) == {BOOM, DOUBLE} and ADD in proposal.fixed
    assert "return a + b" in git(repo, "show", "HEAD:src/calc/__init__.py")
    assert not any("\x1b[" in e.line for e in seen.of(ev.TestOutput))
