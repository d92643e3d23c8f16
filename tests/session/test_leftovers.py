"""What a kill -9 leaves is the next start's to clean, at once: a real `tui-engineer run`
killed while its test run never ends leaves no `tui-engineer-junit-*` folder in the system's
temp folder (the run's reports live beside the session's shadow), and the next start removes
the shadow and the reports at once, without waiting for them to age."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES
from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.timing_support import REACHED, RunProcess
from tui_engineer.vcs.cleanup import cleanup_leftovers
from tui_engineer.vcs.owner import alive
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home

# Passes on the starting commit; once the step adds sub, it never ends.
HANGS_WITH_SUB = (
    "import time\n\nimport calc\n\n\ndef test_waits():\n"
    "    while hasattr(calc, 'sub'):\n        time.sleep(0.1)\n"
)


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
def test_a_kill_during_a_test_that_never_ends_leaves_nothing_the_next_start_keeps(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(system_temp))
    repo = make_repo({**SAMPLE_FILES, "tests/test_waits.py": HANGS_WITH_SUB})
    with open_repo(repo) as opened:
        home = shadow_home(opened)
    scripted_server.script(Reply(text=SUB))
    run = RunProcess(repo, scripted_server, "add sub", "--no-plan")
    try:
        run.wait_event("tests_started", step=1)
        for _ in range(REACHED * 50):  # the step's run has its report folder
            if list(home.glob("*.reports/tui-engineer-junit-*")):
                break
            time.sleep(0.02)
        else:
            raise AssertionError(f"no report folder under {home}: {list(home.iterdir())}")
    finally:
        run.kill()  # kill -9 of the run and its test processes
    assert list(system_temp.glob("tui-engineer-junit-*")) == []
    # The next start comes later than the kill's last process has ended: a shadow whose owner
    # lock is still held that instant is a live session's, left alone (on a loaded machine
    # the killed tree takes a moment to go). Bounded: a lock kept on would fail below.
    for _ in range(REACHED * 50):
        if not any(alive(lock) for lock in home.glob("*.owner")):
            break
        time.sleep(0.02)

    said = cleanup_leftovers(repo)  # what the next start does first

    assert any("removed leftover worktree from session" in s for s in said), said
    assert list(home.iterdir()) == []  # shadow, reports and owner lock: all gone at once
