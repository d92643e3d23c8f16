"""The user's pre-commit hook is part of verifying a step: it runs on the step's content in the
shadow before the review (the index and working files as `git commit` would show them), and a
refusal goes back to the model with the hook's own words, so the accept commits at once. Real
headless sessions on the calc repo, real git hooks and pytest runs, the model over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git, write_hook
from tests.engine_support import SUB, edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev

pytestmark = pytest.mark.usefixtures("api_key")

# The first answer adds `sub` but leaves an unused `import os`; the second removes it.
SUB_WITH_OS = SUB + edit("calc.py", "def add(a, b):\n", "import os\n\n\ndef add(a, b):\n")
DROP_OS = edit("calc.py", "import os\n\n\ndef add(a, b):\n", "def add(a, b):\n")

# Two ways a hook reads what is committed: the index, or the files of the working tree.
READS_INDEX = (
    "for f in $(git diff --cached --name-only); do\n"
    "  if git show \":$f\" | grep -q '^import os'; then echo \"$f: F401 'os' imported but unused\";"
    " exit 1; fi\n"
    "done\n"
)
READS_FILES = (
    "if grep -q '^import os' calc.py; then echo \"calc.py:1: F401 'os' imported but unused\";"
    " exit 1; fi\n"
)


async def _session(repo: Path, server: ScriptedServer) -> list[ev.Event]:
    server.script(Reply(text=SUB_WITH_OS), Reply(text=DROP_OS))
    result, seen = await run_headless(repo, "add sub", server.base_url, plan=False)
    assert result.outcome == "done", result.message
    assert len(server.chat_requests) == 2  # one more model call, with the hook's words
    assert "F401 'os' imported but unused" in str(server.chat_requests[1])
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    text = (repo / "calc.py").read_text()
    assert "def sub" in text and "import os" not in text
    assert not seen.of(ev.AcceptRefused)
    return seen.events


@whole_session
@pytest.mark.parametrize("body", [READS_INDEX, READS_FILES], ids=["index", "working-files"])
async def test_a_hook_refusal_goes_to_the_fix_loop_and_the_fixed_step_commits(
    make_repo, scripted_server: ScriptedServer, body: str
) -> None:
    repo = make_repo()
    write_hook(repo, "pre-commit", body)
    events = await _session(repo, scripted_server)
    ran = [e for e in events if isinstance(e, ev.CheckFinished)]
    assert [e.ok for e in ran] == [False, True]  # refused, then passed: never "verified" before


@whole_session
async def test_a_hook_under_core_hooks_path_is_run_too(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    hooks = tmp_path / "my-hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text("#!/bin/sh\n" + READS_INDEX)
    (hooks / "pre-commit").chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    await _session(repo, scripted_server)


@whole_session
async def test_a_hook_refusing_on_the_starting_commit_is_said_once_and_never_blocks(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    write_hook(repo, "pre-commit", "echo 'lint: everything is wrong'; exit 1\n")
    scripted_server.script(Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert len(scripted_server.chat_requests) == 1  # the model is not asked about it
    notices = [e.message for e in seen.of(ev.Notice) if "pre-commit hook" in e.message]
    assert len(notices) == 1 and "before this session" in notices[0]
    assert seen.of(ev.AcceptRefused)  # the accept still runs the hook for real
