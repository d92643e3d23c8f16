"""A test run started early (LocalSandbox.prewarm): pytest's start-up runs while the model writes
the edit, and the run then reads the files as they are when it goes on. Each repo here has a test
that passes only in such a run (`sys.argv[0]` is "-c" there, pytest's __main__ in a plain run),
so a report says which kind of run it came from."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import edit, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.config import Settings
from tui_engineer.engine import events as ev
from tui_engineer.sandbox import LocalSandbox
from tui_engineer.sandbox.bubblewrap import jail_for
from tui_engineer.sandbox.factory import make_sandbox

PYTEST = f"{sys.executable} -m pytest -q"
WARM_ONLY = "import sys\n\n\ndef test_started_early():\n    assert sys.argv[0] == '-c'\n"
FILES = {"calc.py": "def add(a, b):\n    return a + b\n", "tests/test_early.py": WARM_ONLY}

MakeRepo = Callable[..., Path]


@pytest.fixture(autouse=True)
def fast_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # speed only


def jailed(repo: Path) -> LocalSandbox:
    sandbox = make_sandbox(Settings(sandbox="local"), repo, "warm")
    assert isinstance(sandbox, LocalSandbox)
    return sandbox


def paused_runs(folder: Path) -> list[int]:
    """Processes of a pre-started run (the bootstrap is on their command line) in `folder`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if b"pytest_load_initial_conftests" in command and cwd == str(folder):
            found.append(int(proc.name))
    return found


def report_files(pids: list[int]) -> set[bytes]:
    """The JUnit files the processes `pids` write: one for each run, whatever it runs in."""
    found = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for arg in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0"):
                if arg.startswith(b"--junitxml="):
                    found.add(arg)
    return found


async def wait_paused(folder: Path) -> None:
    """Until the pre-started run waits for "go" (blocked reading its pipe): it has read the ini.
    Polled, never looked at once: a process in the middle of exec shows an empty cmdline (the
    shell becoming bwrap, bwrap's child becoming Python), so one look can miss a run just
    started (once in CI's full run)."""
    for _ in range(600):
        for pid in paused_runs(folder):
            with contextlib.suppress(OSError):
                if Path(f"/proc/{pid}/wchan").read_text().endswith("pipe_read"):
                    return
        await asyncio.sleep(0.05)
    raise AssertionError("the pre-started run never paused")


async def none_left(folder: Path) -> bool:
    """Whether the pre-started run's processes are gone: they end with bubblewrap's own (its
    --die-with-parent), a moment after the group is killed."""
    for _ in range(200):
        if not paused_runs(folder):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_the_early_run_reads_the_files_written_after_it_started(make_repo: MakeRepo) -> None:
    repo = make_repo(FILES)
    sandbox = jailed(repo)
    await sandbox.prewarm(repo, PYTEST)
    await wait_paused(repo)
    (repo / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 6\n"
    )
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    await sandbox.close()
    assert (report.passed, report.failed) == (1, 1)  # the early run, and it saw the new test
    assert [f.test_id for f in report.failures] == ["tests/test_calc.py::test_add"]
    assert "assert 5 == 6" in report.failures[0].message + (report.failures[0].traceback or "")
    assert git(repo, "status", "--porcelain") == "?? tests/test_calc.py"  # no junit, no cache


async def test_a_changed_ini_file_makes_a_plain_run_instead(make_repo: MakeRepo) -> None:
    repo = make_repo(FILES)
    sandbox = jailed(repo)
    await sandbox.prewarm(repo, PYTEST)
    await wait_paused(repo)
    (repo / "pytest.ini").write_text("[pytest]\naddopts = -p no:doctest\n")
    report = await sandbox.run_tests(repo, PYTEST, timeout=60)
    await sandbox.close()
    assert (report.passed, report.failed) == (0, 1)  # a plain run: the early one read the old ini
    assert await none_left(repo)


async def test_another_command_or_closing_ends_the_early_run(make_repo: MakeRepo) -> None:
    repo = make_repo(FILES)
    sandbox = jailed(repo)
    await sandbox.prewarm(repo, PYTEST)
    await wait_paused(repo)
    report = await sandbox.run_tests(repo, f"{PYTEST} -x", timeout=60)
    assert (report.passed, report.failed) == (0, 1)  # not the early run: another command
    assert await none_left(repo)
    await sandbox.prewarm(repo, PYTEST)
    await wait_paused(repo)
    await sandbox.close()
    assert await none_left(repo)


async def test_two_early_starts_at_once_leave_one_run_and_closing_ends_it(
    make_repo: MakeRepo,
) -> None:
    """The step in progress and the step prepared ahead share the session's sandbox, and each
    may start its next run early: started at the same moment, both runs were made, one was
    forgotten, and it stayed paused (a Python with pytest loaded) until the session ended."""
    repo = make_repo(FILES)
    sandbox = jailed(repo)
    await asyncio.gather(sandbox.prewarm(repo, PYTEST), sandbox.prewarm(repo, PYTEST))
    await wait_paused(repo)
    await asyncio.sleep(0.5)  # a second run, had one been made, is paused by now too
    assert len(report_files(paused_runs(repo))) == 1
    await sandbox.close()
    assert await none_left(repo)


async def test_closing_while_a_run_starts_early_ends_that_run_too(make_repo: MakeRepo) -> None:
    """The session ends (the sandbox closes) while a run is being started early: that run was
    kept after the close had ended the others, paused until tui-engineer exited, its pipe
    closed after the event loop ("Event loop is closed", once in CI's full run). A closed
    sandbox starts nothing more."""
    repo = make_repo(FILES)
    sandbox = LocalSandbox(jail=jail_for(repo, repo / ".git" / "objects", [], network=False))
    await asyncio.gather(sandbox.prewarm(repo, PYTEST), sandbox.close())
    assert await none_left(repo)
    await sandbox.prewarm(repo, PYTEST)
    await asyncio.sleep(1)  # time enough to pause, had it started
    assert not paused_runs(repo)


async def test_a_one_edit_session_runs_its_tests_in_the_early_run(
    make_repo: MakeRepo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    repo = make_repo(FILES)
    sub = "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
    scripted_server.script(
        Reply(text=f"calc.py\n<<<<<<< SEARCH\n    return a + b\n=======\n{sub}>>>>>>> REPLACE\n")
    )
    result, _seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, result.message  # the test that passes only when started early
    assert "def sub" in (repo / "calc.py").read_text()


@whole_session
async def test_the_baseline_leaves_the_early_run_to_the_first_step(
    make_repo: MakeRepo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18: the baseline runs beside the plan, cold; the run started early is the first
    step's (its start-up would otherwise be on the critical path)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-key-0123456789")
    repo = make_repo(FILES)
    add = "def add(a, b):\n    return a + b\n"
    scripted_server.script(Reply(text=edit("calc.py", add, add + "\n\n# checked\n"), delay=1))
    result, seen = await run_headless(
        repo, "note it", scripted_server.base_url, plan=False, test_command=PYTEST,
        sandbox="local",
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    (baseline,) = seen.of(ev.BaselineReady)
    assert baseline.failing == ("tests/test_early.py::test_started_early",)  # a plain run
    (step_run,) = seen.of(ev.TestsFinished)
    assert (step_run.passed, step_run.failed) == (1, 0)  # the early run
