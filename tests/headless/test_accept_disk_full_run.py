"""`run --yes` when the disk fills during the accept (issue 52): the session stops with the
disk named (its folder, the room needed), exit 2 as any setup problem, never 'This is a bug'
(exit 70); nothing of the user's is written; once space is freed, `--resume` commits the same
step without asking the model again. The real `tui-engineer run`, real git and hook, the model
over HTTP, the repository on a real small file system (tests/disk_support.py)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git, repo_at, write_hook
from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import run_to_the_end


@whole_session
def test_a_disk_that_fills_during_the_accept_stops_named_and_resume_commits(
    small_disk: Path, scripted_server: ScriptedServer
) -> None:
    repo = repo_at(small_disk / "repo")
    filler = small_disk / "filler"
    # Something else on the machine takes the last byte while the accept runs: the step's
    # objects are in, the commit's tree and the commit are not.
    # (Only where the small disk is: never in the sandbox's own /tmp.)
    here = small_disk / "here"
    here.touch()
    fill = f"[ -e '{here}' ] && cat /dev/zero > '{filler}' 2>/dev/null\nexit 0\n"
    hook = write_hook(repo, "pre-commit", fill)
    scripted_server.script(Reply(text=SUB))

    code, err, run = run_to_the_end(
        repo, scripted_server, "add sub", "--no-plan", "--no-commit-hook-check"
    )

    assert code == 2, err
    said = "\n".join(str(e.get("message", "")) for e in run.events) + err  # --json's lines
    stop = next(e["message"] for e in run.events if e["type"] == "error")
    assert "No space left on device in " in stop and str(repo) in stop, stop
    assert "needed" in stop and "tui-engineer run --resume" in stop, stop
    assert "bug" not in said.lower(), said
    assert git(repo, "log", "--format=%s") == "initial"
    assert not (repo / "calc.py").read_text().count("def sub")
    filler.unlink()  # the user frees space
    hook.unlink()
    code, err, run = run_to_the_end(repo, scripted_server, None, "--resume")
    assert code == 0, err
    assert git(repo, "log", "--format=%s") == "add sub\ninitial"
    assert git(repo, "status", "--porcelain") == ""
    assert len(scripted_server.chat_requests) == 1  # the same step: no new model call
