"""An accept your repository refuses (a pre-commit or commit-msg hook exiting 1, commit signing
with no gpg) is not the end of the session: the step stays under review with git's words and
what to do, nothing is lost, and an accept after fixing the cause commits it. The real
`tui-engineer run` on a real repository with real hooks, the model over HTTP."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, write_hook
from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import run_answering, run_to_the_end


def refusing_hook(repo: Path, name: str, says: str) -> Path:
    """A hook `name` that refuses (exit 1, saying `says`) while the returned file exists: the
    user "fixes the cause" by removing it."""
    block = repo.parent / f"{name}-blocks"
    block.touch()
    write_hook(repo, name, f"if [ -e '{block}' ]; then echo '{says}' >&2; exit 1; fi\n")
    return block


def add_sub_answering(repo: Path, server: ScriptedServer, answers: str, *flags: str):
    """`tui-engineer run "add sub" --no-plan --full-tests-always FLAGS`, answered `answers`,
    the model proposing SUB."""
    server.script(Reply(text=SUB))
    flags = ("--no-plan", "--full-tests-always", *flags)
    return run_answering(repo, server, "add sub", answers, *flags)


@whole_session
def test_a_refusing_pre_commit_hook_keeps_the_step_in_review_and_a_second_accept_commits(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    block = refusing_hook(repo, "pre-commit", "lint: calc.py: trailing whitespace")
    # The hook removes its block on the first run: the user fixed the lint between answers.
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(hook.read_text().replace("exit 1", f"rm '{block}'; exit 1"))

    done = add_sub_answering(repo, scripted_server, "a\na\n\n\n")

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "lint: calc.py: trailing whitespace" in out  # git's (the hook's) own words
    assert "Step 1 is not committed" in out and "still under review" in out
    assert out.count("[a]ccept, [p]er hunk") >= 2  # asked again, the same proposal
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert "def sub" in (repo / "calc.py").read_text()
    assert len(scripted_server.chat_requests) == 1  # no new model call for the same step


@whole_session
def test_a_refusing_commit_msg_hook_keeps_the_step_and_a_stop_leaves_it_resumable(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    block = refusing_hook(repo, "commit-msg", "commit-msg: the subject needs a ticket id")

    done = add_sub_answering(repo, scripted_server, "a\nt\n")  # refused, then stop

    assert done.returncode == 1, done.stdout + done.stderr
    assert "commit-msg: the subject needs a ticket id" in done.stdout
    assert "Step 1 is not committed" in done.stdout
    assert "Traceback" not in done.stderr
    assert git(repo, "rev-list", "--count", "HEAD") == "1"  # nothing committed
    assert git(repo, "status", "--porcelain") == ""  # nothing of the step in the user's tree

    block.unlink()  # the user fixes the cause, then goes on: the same proposal, no model call
    code, err, _ = run_to_the_end(repo, scripted_server, None, "--resume")
    assert code == 0, err
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert len(scripted_server.chat_requests) == 1


@whole_session
def test_yes_stops_resumably_at_an_accept_git_refuses_signing_without_gpg(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "gpg.program", str(repo.parent / "no-such-gpg"))
    scripted_server.script(Reply(text=SUB))

    code, err, run = run_to_the_end(repo, scripted_server, "add sub", "--no-plan")

    assert code == 1, err
    assert "Traceback" not in err
    refused = [e for e in run.events if e["type"] == "accept_refused"]
    assert refused and "sign" in refused[0]["message"]
    finished = run.events[-1]
    assert finished["type"] == "session_finished" and finished["outcome"] == "stopped"
    assert "--resume" in finished["message"]
    assert git(repo, "rev-list", "--count", "HEAD") == "1"

    git(repo, "config", "commit.gpgsign", "false")  # fixed: the resumed session commits it
    code, err, _ = run_to_the_end(repo, scripted_server, None, "--resume")
    assert code == 0, err
    assert git(repo, "log", "-1", "--format=%s") == "add sub"
    assert len(scripted_server.chat_requests) == 1
