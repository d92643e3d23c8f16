"""`tui-engineer run --yes` on a repository whose pre-commit hook refuses an unused import: the
step goes back to the model with the hook's words and the fixed step is committed, one more
model call, no refusal; a line per hook run in the text output, a `check_finished` event in
--json. The real command, real git hooks and pytest, the model over HTTP."""

from __future__ import annotations

import json

from tests.conftest import git, write_hook
from tests.engine.test_commit_hook_check import DROP_OS, READS_FILES, SUB_WITH_OS
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import run_answering

FLAGS = ("--yes", "--no-plan", "--full-tests-always")


@whole_session
def test_yes_commits_the_step_fixed_after_the_hook_refused_it(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    write_hook(repo, "pre-commit", READS_FILES)
    scripted_server.script(Reply(text=SUB_WITH_OS), Reply(text=DROP_OS))

    done = run_answering(repo, scripted_server, "add sub", "", *FLAGS)

    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "✗ pre-commit hook: refused" in out and "F401 'os' imported but unused" in out
    assert "✓ pre-commit hook: passed" in out
    assert "refused the commit" not in out  # the accept ran the hook for real: it passed
    assert len(scripted_server.chat_requests) == 2
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert "import os" not in (repo / "calc.py").read_text()


@whole_session
def test_json_has_an_event_per_hook_run(make_repo, scripted_server: ScriptedServer) -> None:
    repo = make_repo()
    write_hook(repo, "pre-commit", READS_FILES)
    scripted_server.script(Reply(text=SUB_WITH_OS), Reply(text=DROP_OS))

    done = run_answering(repo, scripted_server, "add sub", "", *FLAGS, "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    checks = [e for e in events if e["type"] == "check_finished"]
    assert [(e["name"], e["ok"]) for e in checks] == [
        ("pre-commit hook", False),
        ("pre-commit hook", True),
    ]
    assert "F401" in checks[0]["output"]
