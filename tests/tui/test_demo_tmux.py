"""`tui-engineer demo` in a real terminal: tmux runs the installed command, keys are sent as a user
types them and the screen is read back with capture-pane. The whole walk of the README: plan →
a test-first step → reject with a reason → fix loop → hand edit → drop a hunk → accept → still
wrong → undo → verdict → quit, then the commits in the sample repo the demo names at exit.
Step 2 is reviewed as a pair: a hand edit in $EDITOR (a real program), the stray line dropped."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.tui.panes.diff_pane import REVIEW_SETTLE

NO_TMUX = "tmux is not installed (.ci/run installs it): this test runs the app in a terminal"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason=NO_TMUX)]

# Generous: on a loaded 2-core machine one test run of the sample project takes ~6 s.
STEP_TIMEOUT = 180.0


class TmuxPane:
    """One detached tmux session on its own server socket (no user config, nothing shared)."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        cmd = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    def start(self, command: str, size: tuple[int, int]) -> None:
        width, height = size
        # Started from pytest, tmux hands the pane COLUMNS=80 LINES=24, and those override the
        # terminal's real size for Python (shutil.get_terminal_size) and so for Textual.
        command = f"unset COLUMNS LINES; {command}"
        self.tmux("new-session", "-d", "-s", "demo", "-x", str(width), "-y", str(height), command)

    def keys(self, *keys: str) -> None:
        """tmux key names (Enter, Tab, BTab, Down), each a separate key press."""
        for key in keys:
            self.tmux("send-keys", "-t", "demo", key)
            time.sleep(0.3)  # a person's pace; the app handles keys in order either way

    def decide(self, key: str) -> None:
        """`a` or `s` as a person presses it: after a look at the proposal (pressed as it
        appears, it is not taken: REVIEW_SETTLE)."""
        time.sleep(REVIEW_SETTLE)
        self.keys(key)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "demo", "-l", text)

    def screen(self) -> str:
        # -J joins lines the terminal wrapped (the repo path printed at exit can be long).
        return self.tmux("capture-pane", "-p", "-J", "-t", "demo")

    def wait(self, what: str, check: Callable[[str], bool]) -> str:
        """Poll the screen until `check` holds; fail with the last screen shown."""
        deadline = time.monotonic() + STEP_TIMEOUT
        while True:
            shown = self.screen()
            if check(shown):
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{shown}")
            time.sleep(0.25)

    def wait_text(self, *texts: str) -> str:
        return self.wait(" and ".join(map(repr, texts)), lambda s: all(t in s for t in texts))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def pane(tmp_path: Path):
    if shutil.which("tmux") is None:  # other modules use this fixture (test_terminal_closed)
        pytest.skip(NO_TMUX)
    # Unique on this machine: tmp_path's name repeats in another run (another worktree, CI).
    pane = TmuxPane(f"tui-engineer-test-{os.getpid()}-{tmp_path.name}")
    yield pane
    pane.close()


def git_log(repo: Path) -> list[str]:
    out = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True)
    return out.stdout.splitlines()


def docstring_editor(folder: Path) -> Path:
    """A real $EDITOR program, as a user would type: it documents `mul` in the file it opens."""
    program = folder / "editor.py"
    program.write_text(
        f"#!{sys.executable}\nimport pathlib, sys\n"
        "path = pathlib.Path(sys.argv[-1])\n"
        "text = path.read_text()\n"
        "path.write_text(text.replace('def mul(a, b):\\n', "
        '\'def mul(a, b):\\n    """a times b."""\\n\'))\n'
    )
    program.chmod(0o755)
    return program


def review_shown(step: int, title: str) -> Callable[[str], bool]:
    """The plan says the step awaits review and the diff is that step's finished proposal."""
    return lambda s: f"{step}. {title}  awaiting review" in s and f"Diff — step {step} ─" in s


def test_the_demo_walks_through_every_decision_in_a_real_terminal(
    pane: TmuxPane, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    demo = f"{shlex.quote(sys.executable)} -m tui_engineer demo --dir {shlex.quote(str(folder))}"
    editor = f"unset VISUAL; export EDITOR={shlex.quote(str(docstring_editor(tmp_path)))}"
    # The shell stays after the app so its last words (where the repo is) can be read.
    pane.start(
        f'cd {shlex.quote(str(tmp_path))}; {editor}; {demo}; echo "demo exited $?"; sleep 600',
        (120, 40),
    )

    # Step 1 is test-first: its review says the new test failed on the old code, as it must.
    shown = pane.wait("the first proposal", review_shown(1, "Add sub  test first"))
    assert "before the change: 1 passed, 1 failed" in shown and "(expected)" in shown
    pane.wait_text("a Accept", "r Reject", "q Quit")  # the footer names the keys
    pane.keys("r")
    pane.wait_text("Reject this proposal")
    pane.type("check negatives too")
    pane.keys("Enter")
    after_reason = review_shown(1, "Add sub  test first")
    # The new proposal follows the reason: sub documented, a negative result tested.
    pane.wait("the proposal after the reason", lambda s: after_reason(s) and "a minus b" in s)

    pane.decide("a")
    shown = pane.wait("step 2 after its fix loop", review_shown(2, "Add mul"))
    assert "1. Add sub  test first  accepted" in shown
    assert "step 2 · diagnose" in shown and "step 2 · fix" in shown
    assert "return a * b" in shown

    # Review as a pair: a hand edit in $EDITOR (the app gives it the terminal), tested again;
    # then the stray pytest.ini line dropped, and only the kept hunks tested and committed.
    pane.keys("n", "o")  # calc.py's hunk, in the editor
    pane.wait_text("Diff — step 2 · edited by you", "Step 2 edited by you")  # tested again
    pane.keys("n", "n", "Space")  # pytest.ini's hunk
    pane.wait_text("(dropped)", "2 of 3 hunks kept")
    pane.decide("a")
    pane.wait_text("Accept the kept hunks", "Dropped: pytest.ini hunk 1")
    pane.type("keep warnings visible")
    pane.keys("Enter")
    pane.wait_text("What is still wrong?", "2 committed")
    pane.type("no way to divide")
    pane.keys("Enter")
    pane.wait("a step planned from 'still wrong'", review_shown(3, "Add div"))
    pane.decide("a")
    pane.wait_text("What is still wrong?", "3 committed")
    pane.keys("Tab", "Tab", "Enter")  # from the box to "Undo last step"
    pane.wait_text("3. Add div  undone", "2 committed")  # the open dialog says the new count
    pane.keys("Enter")  # the box has the focus again: empty, Enter means "Done"
    pane.wait_text("How did it go?")
    pane.keys("BTab", "Down", "Down", "Enter")  # the levels: "It works"
    pane.keys("Tab")
    pane.type("tried in tmux")
    pane.keys("Enter")
    pane.wait_text("finished: done — 2 step(s) committed")
    pane.keys("q")
    shown = pane.wait_text("demo exited 0")

    kept = re.search(r"the sample repo is kept in (\S+)", shown)
    assert kept, shown
    repo = Path(kept.group(1))
    assert repo.parent == folder
    assert git_log(repo) == ["Add mul", "Add sub", "Sample project: add() and its test"]
    mul = subprocess.run(
        ["git", "show", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    changed = subprocess.run(
        ["git", "show", "--format=", "--name-only", "HEAD"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert '"""a times b."""' in mul  # the hand edit
    assert changed == ["calc.py", "tests/test_calc.py"] and "no:warnings" not in mul  # dropped
    assert "Edited by you during the review." in mul
    assert "left out: pytest.ini hunk 1 (keep warnings visible)" in mul
    runs = subprocess.run(
        [sys.executable, "-m", "tui_engineer", "runs", "-C", str(repo)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "2 (1 undone)" in runs and "worked" in runs, runs
