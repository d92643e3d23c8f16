"""`tui-engineer run`: `!command` at "What is still wrong?" runs the human's command in the
repository, prints its output, and sends it (its tail, secrets masked) with the answer: the
real CLI on a real repo, answering on stdin, the model over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.engine_support import KEY, MUL, SUB, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.records.recorder import runs_dir

TOKEN = "deploy-0123456789-secret"


@whole_session
def test_a_command_at_the_question_goes_with_the_answer(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB), Reply(text=plan_reply("Add mul")), Reply(text=MUL))
    command = [sys.executable, "-m", "tui_engineer", "run", "add sub", "--no-plan"]
    command += ["-C", str(repo), "--base-url", scripted_server.base_url, "--model", "test-model"]
    env = {**os.environ, "OPENAI_API_KEY": KEY, "DEPLOY_TOKEN": TOKEN}
    # Accept step 1; at the question run a command, then answer; accept step 2; done; no verdict.
    shell = '!grep -c "def " calc.py; echo "token $DEPLOY_TOKEN"; exit 3'
    answers = f"a\n{shell}\nmul is missing\na\n\n\n"
    done = subprocess.run(
        command, input=answers, capture_output=True, text=True, env=env, timeout=180
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"2\ntoken {TOKEN}\n[exit status 3]" in done.stdout  # the user sees it all
    plan_call = str(scripted_server.chat_requests[1].messages)
    assert "mul is missing" in plan_call and "(exit status 3)" in plan_call
    assert "token [masked]" in plan_call and TOKEN not in plan_call
    (record,) = runs_dir(repo).glob("*.jsonl")
    assert "The human ran this command in the repository" in record.read_text()
    # Where the answer is named (the Plan pane's "you:" line), the human's words alone.
    plans = [json.loads(line) for line in record.read_text().splitlines() if '"plan_ready"' in line]
    assert plans[-1]["steps"][-1]["asked"] == "mul is missing"
