"""`tui-engineer run`'s `p` answer, in the style of `git add -p`: the real CLI on a real repo,
answering on stdin, the model over HTTP. A dropped hunk stays out of the commit, whose tests
ran on the kept hunks, and the model's next request is told about it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git
from tests.engine_support import plan_reply
from tests.pair_support import FILES, MUL, STRAY, SUB_CODE, SUB_TEST
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session

KEY = "sk-test-secret-key-0123456789"


def run(repo: Path, url: str, answers: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub and mul", "-C", str(repo)]
    command += ["--base-url", url, "--model", "test-model", "--full-tests-always"]
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return subprocess.run(
        command, input=answers, capture_output=True, text=True, env=env, timeout=180
    )


def by_step(request) -> Reply:
    """Answers by what is asked, whatever the order (step 2 is prepared during step 1's
    review)."""
    user = str(request.messages[1].get("content", "")) if len(request.messages) > 1 else ""
    if "Now do step 2" in user:
        return Reply(text=MUL)
    if "Now do step 1" in user:
        return Reply(text=STRAY + SUB_CODE + SUB_TEST)
    return Reply(text=plan_reply("Add sub", "Add mul"))


@whole_session
def test_p_keeps_and_drops_hunk_by_hunk_and_commits_only_the_kept_ones_tested(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(*[by_step] * 4)
    # Step 1: per hunk: drop the stray print (why), keep the rest; step 2: accept; then done.
    answers = "p\nn\nno debug prints\ny\ny\na\n\n\n"
    done = run(repo, scripted_server.base_url, answers)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "Keep this hunk of calc.py [y,n,a,d,q,?]?" in done.stdout
    assert '+print("debug")' in done.stdout  # the hunk shown before its question
    assert "Keeping 2 of 3 hunks: testing them again." in done.stdout
    assert "accepted: partial: 2 of 3 hunks, tests re-run" in done.stdout
    step_1 = git(repo, "show", "HEAD~1:calc.py")
    assert "def sub(a, b)" in step_1 and "debug" not in step_1
    body = git(repo, "log", "-1", "--format=%B", "HEAD~1")
    assert "left out: calc.py hunk 1 (no debug prints)" in body
    # Step 2 is asked of the model once: prepared on the whole of step 1, it is moved onto the
    # kept hunks and tested again there (issue 35); begun before its model was asked, it is
    # begun again on them. Which of the two depends on how far it got when the answers came
    # (they are all on stdin at once), so only the one call is checked.
    asked = [str(r.messages[1:2]) for r in scripted_server.chat_requests]
    assert sum("Now do step 2" in text for text in asked) == 1
    step_2 = git(repo, "show", "HEAD:calc.py")
    assert "def mul(a, b)" in step_2 and "def sub(a, b)" in step_2 and "debug" not in step_2
