"""`tui-engineer demo`: the real app, the sample repo and the built-in model over real HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.tiers import whole_session
from tests.tui.app_support import (
    SIZE,
    asked,
    chat_text,
    demo_app,
    diff_text,
    reviewing,
    session_ended,
    type_text,
    visible_lines,
    wait_for,
    wait_for_screen,
)
from tui_engineer.demo import DEFAULT_REQUEST, make_sample_repo, reply
from tui_engineer.engine.prompts import TEST_FIRST_STEP, plan_messages
from tui_engineer.tui.app import TuiEngineerApp
from tui_engineer.tui.screens import RejectReasonScreen, StillWrongScreen, VerdictScreen

# A wait that spans pytest runs in the sandbox (the starting commit's suite, a test-first
# step's run before and after its change, a fix loop's): 25 s at load 13 on this 2-core machine,
# and past 60 s with more beside it (a timeout of 60 failed at load 9 in a full run).
RUNS_WAIT = 240


def log(repo: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    return out.stdout.splitlines()


@whole_session
async def test_demo_plans_reacts_to_a_reject_reason_fixes_and_answers_still_wrong(
    tmp_path: Path,
) -> None:
    with demo_app(tmp_path) as (repo, app):
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1), timeout=RUNS_WAIT)
            await pilot.press("r")
            await wait_for_screen(pilot, app, RejectReasonScreen)
            await type_text(pilot, "check negatives too")
            await pilot.press("enter")
            await wait_for(pilot, reviewing(app, 2), timeout=RUNS_WAIT)
            assert "sub(3, 5) == -2" in diff_text(app)  # the new proposal follows the reason
            await pilot.press("a")
            await wait_for(pilot, reviewing(app, 3), timeout=RUNS_WAIT)  # mul: fails, is fixed
            assert app.plan_pane.status_of(2) == "awaiting review"
            assert "return a * b" in diff_text(app)
            await pilot.press("a")
            await wait_for_screen(pilot, app, StillWrongScreen)
            await type_text(pilot, "no way to divide")
            await pilot.press("enter")
            await wait_for(pilot, reviewing(app, 4), timeout=RUNS_WAIT)
            await pilot.press("a")
            await wait_for_screen(pilot, app, StillWrongScreen)
            await pilot.click("#done")
            await wait_for_screen(pilot, app, VerdictScreen)
            await pilot.click("#level-works")
            await pilot.click("#save")
            await wait_for(pilot, session_ended(app))
            assert not asked(app, "verdict")()
            await pilot.press("q")
    assert log(repo) == ["Add div", "Add mul", "Add sub", "Sample project: add() and its test"]


async def test_the_demos_first_step_is_test_first_and_its_review_shows_both_runs(
    tmp_path: Path,
) -> None:
    """A new user meets a test-first step in the demo: step 1 is marked "test first" (step 2 is
    not), and its review says the new test failed on the old code and passes with the change."""
    with demo_app(tmp_path) as (_repo, app):
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1), timeout=RUNS_WAIT)
            assert "1. Add sub  test first" in str(app.plan_pane.get_option_at_index(0).prompt)
            assert "test first" not in str(app.plan_pane.get_option_at_index(1).prompt)
            assert "1. Add sub (test first)\n  2. Add mul\n" in chat_text(app) + "\n"
            runs = app.test_pane.runs_text
            assert "before the change: 1 passed, 1 failed" in runs and "(expected)" in runs
            assert "after the change" in runs and "2 passed" in runs
            # Shown whole on the screen (a border line cut them at 120 columns).
            shown = " ".join(visible_lines(app.test_pane.query_one("#test-runs")))
            assert " ".join(runs.split()) in " ".join(shown.split())
            assert "def test_sub" in diff_text(app) and "def sub" in diff_text(app)
            await pilot.press("q")


def test_the_demo_model_marks_a_step_test_first_only_when_the_plan_prompt_asks() -> None:
    asked_for = plan_messages(DEFAULT_REQUEST, "calc.py", "", test_first=True)
    plain = plan_messages(DEFAULT_REQUEST, "calc.py", "", test_first=False)
    marked = [s.get("test_first", False) for s in _plan_steps(reply(asked_for))]
    assert marked == [True, False]
    assert not any(s.get("test_first", False) for s in _plan_steps(reply(plain)))
    # Run again on a repo that has sub already (the crash harness's next run): no new behaviour,
    # so not test-first (its test would pass on the old code and the step never be accepted).
    has_sub = "calc.py (6 lines) — defines sub\n  1: def add(a, b)\n  5: def sub(a, b)"
    again = plan_messages(DEFAULT_REQUEST, has_sub, "", test_first=True)
    assert not any(s.get("test_first", False) for s in _plan_steps(reply(again)))


def test_the_demo_model_says_its_test_comes_first_when_the_step_prompt_asks() -> None:
    def step_prompt(*extra: str) -> list[dict[str, str]]:
        user = "\n\n".join(("Now do step 1: Add sub", *extra, "Write the edits."))
        return [{"role": "system", "content": "You"}, {"role": "user", "content": user}]

    first = reply(step_prompt(TEST_FIRST_STEP))
    assert first.startswith("Test first: `test_sub`") and "def test_sub" in first
    assert "Test first" not in reply(step_prompt())


def run_without_key(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`tui-engineer run ARGS` in `repo` with no API key set."""
    return subprocess.run(
        [sys.executable, "-m", "tui_engineer", "run", *args, "-C", str(repo)],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"},
    )  # fmt: skip


def _plan_steps(text: str) -> list[dict[str, object]]:
    return json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])["steps"]


def test_the_demo_makes_the_folder_it_is_given(tmp_path: Path) -> None:
    """`tui-engineer demo --dir new/folder` made a traceback when the folder did not exist."""
    repo = make_sample_repo(tmp_path / "new" / "folder")
    assert repo.parent == tmp_path / "new" / "folder"
    assert (repo / "calc.py").is_file()


@whole_session
async def test_a_demo_quit_at_step_2_goes_on_with_demo_resume(tmp_path: Path) -> None:
    # `tui-engineer --resume` in the kept sample repo would need a server and a key; the exit
    # line names `tui-engineer demo --resume REPO`, which brings the built-in model back.
    from tui_engineer.cli.launch import kept_sample
    from tui_engineer.demo import DemoServer, demo_flags
    from tui_engineer.session.options import RunOptions
    from tui_engineer.tui.screens import QuitScreen

    with demo_app(tmp_path) as (repo, app):
        async with app.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(app, 1), timeout=RUNS_WAIT)
            await pilot.press("a")
            await wait_for(pilot, lambda: app.plan_pane.status_of(2) == "awaiting review",
                           timeout=RUNS_WAIT)  # fmt: skip
            await pilot.press("q")
            await wait_for_screen(pilot, app, QuitScreen)
            await pilot.click("#quit")
            await wait_for(pilot, lambda: app.return_code is not None, timeout=60)
    assert kept_sample(repo).endswith(f"tui-engineer demo --resume {repo}")
    # A plain `--resume` there, with no key, says the same way on instead of only asking for one.
    plain = run_without_key(repo, "--resume")
    assert plain.returncode != 0
    assert "No API key" in plain.stderr
    assert f"`tui-engineer demo --resume {repo}`" in plain.stderr

    with DemoServer(pace=0) as server:
        options = RunOptions(request="", repo=repo, flags=demo_flags(server.base_url), resume="")
        again = TuiEngineerApp(options, deterministic=True)
        async with again.run_test(size=SIZE) as pilot:
            await wait_for(pilot, reviewing(again, 1), timeout=RUNS_WAIT)
            assert "Resuming session" in chat_text(again)
            assert "return a * b" in diff_text(again)  # step 2, shown again
            await pilot.press("a")
            await wait_for(pilot, lambda: log(repo)[0] == "Add mul", timeout=RUNS_WAIT)
            await again.stop_work()


@whole_session
def test_a_new_request_in_a_kept_sample_repo_without_a_key_names_the_demo(tmp_path: Path) -> None:
    repo = make_sample_repo(tmp_path)
    plain = run_without_key(repo, "add sub")
    assert plain.returncode != 0
    assert "`tui-engineer demo` runs the demo again, in a new sample repo" in plain.stderr
    # Any other repository: the key's message alone.
    git_repo = tmp_path / "mine"
    subprocess.run(["git", "init", "-q", str(git_repo)], check=True)
    (git_repo / "test_x.py").write_text("def test_x():\n    pass\n")
    subprocess.run(["git", "-C", str(git_repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(git_repo), "-c", "user.name=u", "-c", "user.email=u@e.invalid",
                    "commit", "-qm", "x"], check=True)  # fmt: skip
    mine = run_without_key(git_repo, "add sub")
    assert "No API key" in mine.stderr and "demo" not in mine.stderr
