"""End to end: the real engine, the real openai client over HTTP to the scripted server, real git
and real pytest subprocesses. Each test asserts on the commits and files a user would see."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import git
from tests.engine_support import StepReviewer, create, edit, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import titles
from tui_engineer.engine import events as ev

SUB_TEST = "\n\ndef test_sub():\n    from calc import sub\n    assert sub(5, 3) == 2\n"
MUL_TEST = "\n\ndef test_mul():\n    from calc import mul\n    assert mul(4, 3) == 12\n"


pytestmark = pytest.mark.usefixtures("api_key")


def add_fn(name: str, body: str, test: str) -> str:
    return edit(
        "calc.py", "    return a + b\n", f"    return a + b\n\n\ndef {name}(a, b):\n{body}"
    ) + edit(
        "tests/test_calc.py", "    assert add(2, 3) == 5\n", f"    assert add(2, 3) == 5{test}"
    )


async def test_two_step_plan_with_a_fix_commits_both_steps(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text="Adding sub.\n\n" + add_fn("sub", "    return a - b\n", SUB_TEST)),
        Reply(text="Adding mul.\n\n" + add_fn("mul", "    return a + b  # oops\n", MUL_TEST)),
        Reply(text="test_mul fails: mul adds its arguments instead of multiplying them."),
        Reply(text=edit("calc.py", "    return a + b  # oops\n", "    return a * b\n")),
    )
    result, seen = await run_headless(repo, "add sub and mul", scripted_server.base_url)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert titles(repo) == ["Add mul", "Add sub", "initial"]
    assert "return a * b" in (repo / "calc.py").read_text()
    assert git(repo, "status", "--porcelain") == ""
    body = git(repo, "log", "-1", "--format=%B")
    assert "test-model" in body  # the trailer names the model
    # The failure was diagnosed in a separate call, and the diagnosis reached the fix call.
    diagnose, fix = scripted_server.chat_requests[3], scripted_server.chat_requests[4]
    assert "test_mul" in diagnose.messages[-1]["content"]
    assert "mul adds its arguments" in fix.messages[-1]["content"]
    finished = seen.of(ev.TestsFinished)
    assert [f.ok for f in finished] == [True, False, True]
    # Work in progress is visible: each applied edit carries the step's diff so far.
    in_progress = [e.diff for e in seen.of(ev.EditsApplied) if e.step == 2]
    assert "+    return a + b  # oops" in in_progress[0]
    assert "+    return a * b" in in_progress[-1]
    suite = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert suite.returncode == 0, suite.stdout


@whole_session
async def test_nothing_changes_in_the_working_tree_before_accept(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    snapshots: list[str] = []

    class Watcher(StepReviewer):
        async def review(self, proposal):
            snapshots.append((repo / "calc.py").read_text())
            from tui_engineer.engine.reviews.review import Decision

            return Decision("stop", "just looking")

    scripted_server.script(
        Reply(text=add_fn("sub", "    return a - b\n", SUB_TEST)),
    )
    result, _ = await run_headless(
        repo, "add sub", scripted_server.base_url, reviewer=Watcher(), plan=False
    )
    assert snapshots == ["def add(a, b):\n    return a + b\n"]
    assert result.exit_code == 1
    assert titles(repo) == ["initial"]
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_created_file_lands_in_the_commit(make_repo, scripted_server: ScriptedServer) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=create("tests/test_more.py", "def test_more():\n    assert True\n")),
    )
    result, _ = await run_headless(repo, "add a test", scripted_server.base_url, plan=False)
    assert result.exit_code == 0
    assert git(repo, "show", "--name-status", "--format=", "HEAD") == "A\ttests/test_more.py"
