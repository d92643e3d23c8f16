"""Accept is atomic: a kill at any moment leaves the step either not there or committed, a
journal finishes or rolls back the interrupted accept at the next start, and the step's files
never go through a symlink in the user's tree (real git, real hooks, real SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import git as git_errors
import pytest

from tests.conftest import git, write_hook
from tui_engineer.vcs.accept_recovery import recover_interrupted_accept
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.journal import JOURNAL, take_accept_lock
from tui_engineer.vcs.owner import release
from tui_engineer.vcs.repo import GitRefused
from tui_engineer.vcs.shadow import Shadow

MINUS = "def add(a, b):\n    return a - b\n"

# A child process that proposes a step and accepts it; the test kills it (and its group).
ACCEPT_IN_CHILD = """
import sys
from pathlib import Path
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.shadow import Shadow
shadow = Shadow.create(Path(sys.argv[1]), session_id="killed")
(shadow.path / "calc.py").write_text({minus!r})
(shadow.path / "util.py").write_text("X = 1\\n")
print(accept(shadow, title="Subtract"), flush=True)
"""


def files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def kill_when(root: Path, marker: Path) -> None:
    """Run an accept in a child; SIGKILL its whole process group once `marker` appears."""
    child = subprocess.Popen(
        [sys.executable, "-c", ACCEPT_IN_CHILD.format(minus=MINUS), str(root)],
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert child.poll() is None, "the accept ended before the kill"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def kill_after_the_branch_moved(root: Path, tmp_path: Path) -> None:
    """Kill an accept once git has moved the branch, before it wrote any file; then take the
    hook that held it there away again, as a next start would find the repo."""
    marker = tmp_path / "ref-moved"
    # git runs this hook once the branch has moved: the accept has not written any file yet.
    write_hook(
        root,
        "reference-transaction",
        f'[ "$1" = committed ] && grep -q refs/heads/main && touch {marker} && sleep 30\nexit 0\n',
    )
    kill_when(root, marker)
    (root / ".git" / "hooks" / "reference-transaction").unlink()


def locks(root: Path) -> list[str]:
    return [str(p) for p in (root / ".git").rglob("*.lock")]


def kill_during_the_pre_commit_hook(root: Path, tmp_path: Path) -> None:
    """Kill an accept (after its decision) while the pre-commit hook runs; the hook is quick
    again at the next start, or the recovery would wait on it."""
    marker = tmp_path / "in-hook"
    write_hook(root, "pre-commit", f"touch {marker}\nsleep 30\n")
    kill_when(root, marker)
    write_hook(root, "pre-commit", "exit 0\n")


def test_a_kill_during_the_pre_commit_hook_leaves_everything_as_before_then_commits_it(
    make_repo, tmp_path
):
    root = make_repo()
    before, head = files(root), git(root, "rev-parse", "HEAD")
    kill_during_the_pre_commit_hook(root, tmp_path)
    assert files(root) == before and git(root, "rev-parse", "HEAD") == head
    assert git(root, "status", "--porcelain") == "" and locks(root) == []
    # The decision was made: the next start makes the commit from the journal.
    said = recover_interrupted_accept(root)
    new = git(root, "rev-parse", "HEAD")
    assert said is not None and "committed now" in said and new[:8] in said
    assert git(root, "log", "--format=%s").splitlines() == ["Subtract", "initial"]
    assert (root / "calc.py").read_text() == MINUS and (root / "util.py").read_text() == "X = 1\n"
    assert git(root, "status", "--porcelain") == "" and locks(root) == []
    assert not (root / ".git" / JOURNAL).exists()
    assert recover_interrupted_accept(root) is None  # said once


def test_an_interrupted_decision_is_rolled_back_when_the_user_edited_its_files_since(
    make_repo, tmp_path
):
    root = make_repo()
    head = git(root, "rev-parse", "HEAD")
    kill_during_the_pre_commit_hook(root, tmp_path)
    (root / "calc.py").write_text("# mine\n")
    said = recover_interrupted_accept(root)
    assert said is not None and "rolled back" in said and "calc.py" in said
    assert git(root, "rev-parse", "HEAD") == head and (root / "calc.py").read_text() == "# mine\n"
    assert not (root / ".git" / JOURNAL).exists()


def test_an_interrupted_decision_whose_hook_now_refuses_is_rolled_back(make_repo, tmp_path):
    root = make_repo()
    before, head = files(root), git(root, "rev-parse", "HEAD")
    kill_during_the_pre_commit_hook(root, tmp_path)
    write_hook(root, "pre-commit", "echo 'lint failed' >&2\nexit 1\n")
    said = recover_interrupted_accept(root)
    assert said is not None and "rolled back" in said and "lint failed" in said
    assert git(root, "rev-parse", "HEAD") == head and files(root) == before
    assert not (root / ".git" / JOURNAL).exists()


def test_a_kill_after_the_branch_moved_is_finished_at_the_next_start(make_repo, tmp_path):
    root = make_repo()
    head = git(root, "rev-parse", "HEAD")
    kill_after_the_branch_moved(root, tmp_path)
    new = git(root, "rev-parse", "HEAD")
    assert new != head and git(root, "rev-parse", "HEAD~1") == head
    assert "a + b" in (root / "calc.py").read_text()  # committed, files not yet written
    said = recover_interrupted_accept(root)
    assert said is not None and "its files are now written" in said and new[:8] in said
    assert (root / "calc.py").read_text() == MINUS and (root / "util.py").exists()
    assert git(root, "status", "--porcelain") == "" and locks(root) == []
    assert git(root, "fsck", "--no-progress") == ""


def test_hooks_are_honoured_through_core_hookspath(make_repo, tmp_path):
    root = make_repo()
    hooks = tmp_path / "my-hooks"
    hooks.mkdir()
    git(root, "config", "core.hooksPath", str(hooks))
    log = tmp_path / "hook.log"
    for name in ("pre-commit", "commit-msg", "post-commit"):
        script = hooks / name
        script.write_text(f"#!/bin/sh\necho {name} >> {log}\n")
        script.chmod(0o755)
    (hooks / "commit-msg").write_text(
        f'#!/bin/sh\necho commit-msg >> {log}\necho "Signed-off-by: Hook" >> "$1"\n'
    )
    (hooks / "pre-commit").write_text(
        f"#!/bin/sh\necho pre-commit >> {log}\ngit diff --cached --name-only >> {log}\n"
    )
    shadow = Shadow.create(root, session_id="hooks")
    try:
        (shadow.path / "calc.py").write_text(MINUS)
        accept(shadow, title="Subtract")
    finally:
        shadow.remove()
    # pre-commit saw the step staged; commit-msg edited the message; post-commit ran last.
    assert log.read_text().split() == ["pre-commit", "calc.py", "commit-msg", "post-commit"]
    assert git(root, "log", "-1", "--format=%B").endswith("Signed-off-by: Hook")


def test_a_branch_locked_by_another_git_is_refused_and_nothing_is_written(make_repo):
    root = make_repo()
    shadow = Shadow.create(root, session_id="lock")
    try:
        (shadow.path / "calc.py").write_text(MINUS)
        lock = root / ".git" / "refs" / "heads" / "main.lock"
        lock.write_text("someone else\n")
        with pytest.raises(GitRefused, match="nothing was written|as they were"):
            accept(shadow, title="Subtract")
        assert "a + b" in (root / "calc.py").read_text()
        assert not (root / ".git" / JOURNAL).exists() and lock.exists()
    finally:
        shadow.remove()


def test_a_step_never_writes_through_a_symlinked_folder(make_repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_repo({"calc.py": "x = 1\n", ".gitignore": "build\n"})
    (root / "build").symlink_to(outside)
    shadow = Shadow.create(root, session_id="link")
    try:
        (shadow.path / ".gitignore").write_text("")  # un-ignore it, and write inside
        (shadow.path / "build").mkdir()
        (shadow.path / "build" / "out.txt").write_text("from the step\n")
        with pytest.raises(GitRefused, match="build is a link"):
            accept(shadow, title="Un-ignore build")
    finally:
        shadow.remove()
    assert list(outside.iterdir()) == []
    assert (root / ".gitignore").read_text() == "build\n"
    assert git(root, "rev-list", "--count", "HEAD") == "1"


def test_hooks_run_without_git_hook_run_too(make_repo):
    """git before 2.36 has no `git hook run`: the hook file itself is run, the same way."""
    from tui_engineer.vcs.commit_objects import _run_hook_file

    root = make_repo()
    write_hook(root, "pre-commit", "echo 'lint: no' >&2\nexit 1\n")
    with pytest.raises(git_errors.GitCommandError, match="lint: no"):
        _run_hook_file(root, "pre-commit", (), {})
    _run_hook_file(root, "post-commit", (), {})  # a missing hook is not an error


def test_finishing_an_interrupted_accept_keeps_edits_made_since(make_repo, tmp_path):
    root = make_repo()
    kill_after_the_branch_moved(root, tmp_path)
    (root / "calc.py").write_text("# edited after the crash\n")  # the user's, not the step's
    said = recover_interrupted_accept(root)
    assert said is not None and "Kept your edits to calc.py" in said
    assert (root / "calc.py").read_text() == "# edited after the crash\n"
    assert (root / "util.py").read_text() == "X = 1\n"  # the step's other file is written


def test_a_dead_sessions_journal_is_finished_though_its_pid_now_names_a_live_process(
    make_repo, tmp_path
):
    """Process ids are reused: the journal's pid pointing at an unrelated live process does
    not keep the next start from committing the decided step."""
    root = make_repo()
    kill_during_the_pre_commit_hook(root, tmp_path)
    journal = root / ".git" / JOURNAL
    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        data = json.loads(journal.read_text())
        journal.write_text(json.dumps({**data, "pid": unrelated.pid}))
        said = recover_interrupted_accept(root)
    finally:
        unrelated.kill()
        unrelated.wait()
    assert said is not None and "committed now" in said
    assert git(root, "log", "--format=%s").splitlines() == ["Subtract", "initial"]
    assert not journal.exists()


def test_a_journal_whose_session_still_accepts_is_left_to_it(make_repo, tmp_path):
    """The accepting session holds the accept lock: a start meanwhile leaves its journal."""
    root = make_repo()
    kill_during_the_pre_commit_hook(root, tmp_path)
    held = take_accept_lock(root / ".git")  # as a live session accepting now holds it
    assert held is not None
    try:
        assert recover_interrupted_accept(root) is None
        assert (root / ".git" / JOURNAL).exists()
    finally:
        release(held)
    assert "committed now" in (recover_interrupted_accept(root) or "")
