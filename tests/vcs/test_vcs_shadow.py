"""The shadow worktree: proposals live there, never in the user's tree (real git repos)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import git, start_conflicting_merge
from tui_engineer.vcs.changes import parse_name_status
from tui_engineer.vcs.cleanup import cleanup_leftovers
from tui_engineer.vcs.partial import staged_tree
from tui_engineer.vcs.repo import GitRefused, open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import owner_file, shadow_home
from tui_engineer.vcs.spare_ahead import AHEAD


def shadow_home_of(root: Path) -> Path:
    with open_repo(root) as repo:
        return shadow_home(repo)


def worktrees(root: Path) -> list[str]:
    out = git(root, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


@pytest.fixture
def shadow(make_repo):
    made = Shadow.create(make_repo(), session_id="s1")
    yield made
    made.remove()


def test_shadow_is_a_checkout_outside_the_users_tree(shadow):
    assert (shadow.path / "calc.py").read_text() == (shadow.root / "calc.py").read_text()
    assert not shadow.path.is_relative_to(shadow.root)
    # A repository of its own (no link back to the user's git folder), reading the user's
    # objects through alternates; git does not list it among the user's worktrees.
    assert (shadow.path / ".git").is_dir()
    assert worktrees(shadow.root) == [str(shadow.root)]
    assert git(shadow.path, "rev-parse", "HEAD") == git(shadow.root, "rev-parse", "HEAD")
    detached = subprocess.run(["git", "symbolic-ref", "-q", "HEAD"], cwd=shadow.path)
    assert detached.returncode == 1


def test_writes_in_the_shadow_leave_the_user_tree_alone(shadow):
    (shadow.path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (shadow.path / "new.py").write_text("x = 1\n")
    assert git(shadow.root, "status", "--porcelain") == ""
    assert "a - b" not in (shadow.root / "calc.py").read_text()
    assert not (shadow.root / "new.py").exists()


def _git_version() -> tuple[int, ...]:
    said = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout
    return tuple(int(n) for n in re.findall(r"\d+", said)[:2])


def test_only_the_shadows_own_index_goes_without_a_checksum(shadow):
    """The shadow's index is written without git's trailing checksum (index.skipHash, git
    2.40+, a saving on every staging; older git ignores it); the user's keeps its checksum and
    config."""
    (shadow.path / "new.py").write_text("x = 1\n")
    assert ("A", "new.py") in shadow.changed_files()
    skipped = (shadow.path / ".git" / "index").read_bytes()[-20:] == bytes(20)
    assert skipped == (_git_version() >= (2, 40))
    assert (shadow.root / ".git" / "index").read_bytes()[-20:] != bytes(20)
    unset = subprocess.run(["git", "config", "index.skipHash"], cwd=shadow.root)
    assert unset.returncode == 1


def test_diff_shows_new_modified_deleted_and_renamed_files(shadow):
    (shadow.path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (shadow.path / "new.py").write_text("x = 1\n")
    (shadow.path / "tests" / "test_calc.py").rename(shadow.path / "tests" / "test_sum.py")
    diff = shadow.diff()
    assert "-    return a + b\n+    return a - b\n" in diff
    assert "new file mode" in diff and "+x = 1" in diff
    assert "rename from tests/test_calc.py\nrename to tests/test_sum.py" in diff
    assert sorted(shadow.changed_files()) == [
        ("A", "new.py"),
        ("M", "calc.py"),
        ("R", "tests/test_sum.py"),
    ]
    (shadow.path / "new.py").unlink()
    (shadow.path / "calc.py").unlink()
    assert ("D", "calc.py") in shadow.changed_files()


def _exactly(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout.decode()


def test_an_edits_diff_and_its_changed_files_are_one_question_to_git(shadow, tmp_path, monkeypatch):
    """After an edit the session shows its diff and then tests its changed files: one `git
    diff` gives both (each reads the whole index, 0.07 s at 200,000 files), exactly as the
    two separate ones did, names git must quote and binary files included; the next edit is
    asked again."""
    import json

    (shadow.path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (shadow.path / "odd name\nwith a newline.py").write_text("x = 1\n")
    (shadow.path / "caf\u00e9.bin").write_bytes(bytes(range(256)))
    (shadow.path / "tests" / "test_calc.py").rename(shadow.path / "tests" / "test_sum.py")
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))

    def diffs() -> int:
        events = [json.loads(line) for line in trace.read_text().splitlines()]
        return sum(e.get("event") == "start" and "diff" in e["argv"] for e in events)

    diff, changes = shadow.diff(), shadow.changes()
    assert diffs() == 1
    # A test run's start and end each write the tree, which rewrites the index (its tree
    # cache) and lists the same: the proposal shown after them is not asked for again.
    index = shadow.path / ".git" / "index"
    before = index.stat().st_ino
    assert staged_tree(shadow) and index.stat().st_ino != before
    assert shadow.diff() == diff and diffs() == 1
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    apart = ["-c", "core.quotePath=false", "diff", "--cached", "--no-color", "--no-ext-diff"]
    assert diff == _exactly(shadow.path, *apart, shadow.baseline, "-M")
    named = _exactly(shadow.path, *apart, shadow.baseline, "-M", "--name-status", "-z")
    assert changes == parse_name_status(named)
    assert sorted(c.path for c in changes) == [
        "caf\u00e9.bin", "calc.py", "odd name\nwith a newline.py", "tests/test_sum.py"
    ]  # fmt: skip
    assert "Binary files /dev/null and b/caf\u00e9.bin differ" in diff

    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    (shadow.path / "calc.py").write_text("def add(a, b):\n    return a * b\n")
    assert "+    return a * b" in shadow.diff()
    assert diffs() == 2


def test_reset_goes_back_to_the_baseline_and_removes_new_files(shadow):
    (shadow.path / "calc.py").write_text("broken\n")
    (shadow.path / "pkg").mkdir()
    (shadow.path / "pkg" / "new.py").write_text("x = 1\n")
    shadow.reset()
    assert shadow.diff() == "" and shadow.changed_files() == []
    assert not (shadow.path / "pkg").exists()
    assert (shadow.path / "calc.py").read_text() == (shadow.root / "calc.py").read_text()


def test_an_empty_repo_gets_a_shadow_too(make_repo):
    root = make_repo({}, commit=False)
    shadow = Shadow.create(root, session_id="empty")
    try:
        assert [p.name for p in shadow.path.iterdir()] == [".git"]
        (shadow.path / "main.py").write_text("print('hi')\n")
        assert shadow.changed_files() == [("A", "main.py")]
        assert "+print('hi')" in shadow.diff()
        assert subprocess.run(["git", "rev-parse", "-q", "--verify", "HEAD"], cwd=root).returncode
    finally:
        shadow.remove()


def test_include_dirty_starts_from_the_users_uncommitted_work(make_repo):
    root = make_repo()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b  # wip\n")
    (root / "idea.txt").write_text("untracked\n")
    before = git(root, "status", "--porcelain")
    shadow = Shadow.create(root, session_id="dirty", include_dirty=True)
    try:
        assert "# wip" in (shadow.path / "calc.py").read_text()
        assert (shadow.path / "idea.txt").read_text() == "untracked\n"
        assert shadow.diff() == ""  # the user's work is the baseline, not a proposal
        assert git(root, "status", "--porcelain") == before
        assert git(root, "log", "--branches", "--tags", "--format=%s") == "initial"  # no branch
    finally:
        shadow.remove()


def test_remove_is_idempotent(shadow):
    shadow.remove()
    shadow.remove()
    assert not shadow.path.exists()
    assert worktrees(shadow.root) == [str(shadow.root)]


def test_reset_after_remove_never_runs_git_in_the_current_folder(shadow, make_repo, monkeypatch):
    """A session's final reset can race its removal (quit mid-step). GitPython runs a command
    whose folder is gone in the process's own folder: there, `git clean` would delete the
    untracked files of whatever repository the user started in."""
    here = make_repo(name="where-the-user-is")
    (here / "notes.txt").write_text("untracked work\n")
    monkeypatch.chdir(here)
    shadow.remove()
    with pytest.raises(GitRefused):
        shadow.reset()
    assert (here / "notes.txt").read_text() == "untracked work\n"


def test_a_merge_in_progress_is_refused(make_repo):
    root = make_repo({"f.txt": "base\n"})
    start_conflicting_merge(root, "f.txt")
    with pytest.raises(GitRefused, match="merge is in progress"):
        Shadow.create(root, session_id="m")


def crash(shadow: Shadow) -> None:
    """What a kill -9 of its session leaves: the shadow, its owner lock no longer held."""
    assert shadow.owner is not None
    os.close(shadow.owner)


# A session in a process of its own: it makes its shadow, says so, and lives on.
HOLD_A_SHADOW = """
import sys, time
from pathlib import Path
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import owner_file, shadow_home


def shadow_home_of(root: Path) -> Path:
    with open_repo(root) as repo:
        return shadow_home(repo)
Shadow.create(Path(sys.argv[1]), session_id=sys.argv[2])
print("made", flush=True)
time.sleep(120)
"""


def session_process(root: Path, session: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_SHADOW, str(root), session],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline() == "made\n"
    return child


def test_cleanup_removes_a_crashed_sessions_worktree_only(make_repo, tmp_path):
    root = make_repo()
    crashed = Shadow.create(root, session_id="crashed1")
    (crashed.path / "half.py").write_text("half-done\n")
    crash(crashed)
    current = Shadow.create(root, session_id="current")
    git(root, "worktree", "add", "-q", "--detach", str(tmp_path / "users-own"))

    said = cleanup_leftovers(root, active_session="current")

    assert len(said) == 1
    assert said[0].startswith("removed leftover worktree from session crashed1 (crashed;")
    assert not crashed.path.exists() and not owner_file(crashed.path).exists()
    assert current.path.exists()
    assert sorted(worktrees(root)) == sorted([str(root), str(tmp_path / "users-own")])
    assert cleanup_leftovers(root, active_session="current") == []
    current.remove()


def test_a_spare_left_half_made_by_a_quit_is_removed_without_calling_it_a_crash(make_repo):
    """The TUI quit while it made the first spare ahead (vcs/spare_ahead.py): no session
    crashed, so none is named; the folder goes all the same."""
    root = make_repo()
    ahead = Shadow.create(root, session_id=f"{AHEAD}4242")
    crash(ahead)
    half = shadow_home_of(root) / f"{AHEAD}4343"  # quit before its repository was made
    half.mkdir()

    assert cleanup_leftovers(root) == []
    assert not ahead.path.exists() and not owner_file(ahead.path).exists()
    assert not half.exists()


def test_a_live_sessions_shadow_is_told_by_its_lock_not_its_process_id(make_repo):
    """Kept while its session lives, though the id in its reason names no process; removed
    at once when the session is killed, though that id now names a live unrelated one."""
    root = make_repo()
    session = session_process(root, "other")
    unrelated = subprocess.Popen(["sleep", "60"])
    try:
        other = Shadow(shadow_home_of(root) / "other", root, "other", "")
        marker = other.path / ".git" / "tui-engineer-session"
        no_such = f"pid {2**22 + 1} "  # above any pid_max: no such process
        marker.write_text(re.sub(r"pid \d+ ", no_such, marker.read_text()))
        assert cleanup_leftovers(root) == []
        assert other.path.exists()

        session.kill()  # kill -9
        session.wait()
        marker.write_text(marker.read_text().replace(no_such, f"pid {unrelated.pid} "))
        said = cleanup_leftovers(root)
    finally:
        for process in (session, unrelated):
            process.kill()
            process.wait()
    assert said and said[0].startswith("removed leftover worktree from session other")
    assert not other.path.exists() and not owner_file(other.path).exists()


def test_a_shadow_half_removed_by_a_kill_is_cleaned_at_once(make_repo):
    """A kill during the end-of-session cleanup leaves part of the folder (its reason gone):
    the next start removes it at once, however young it is."""
    root = make_repo()
    dead = Shadow.create(root, session_id="dead")
    (dead.path / ".git" / "tui-engineer-session").unlink()
    crash(dead)
    live = Shadow.create(root, session_id="live")  # a live session's, as young
    (live.path / ".git" / "tui-engineer-session").unlink()
    said = cleanup_leftovers(root)
    assert said == [f"removed leftover folder of session dead ({dead.path})"]
    assert not dead.path.exists() and live.path.exists()
    live.remove()
    assert not owner_file(live.path).exists()


def test_cleanup_removes_an_old_unregistered_folder(make_repo):
    root = make_repo()
    shadow = Shadow.create(root, session_id="s")
    stray = shadow.path.parent / "never-registered"
    stray.mkdir()
    old = time.time() - 3600
    os.utime(stray, (old, old))
    said = cleanup_leftovers(root, active_session="s")
    assert said == [f"removed leftover folder of session never-registered ({stray})"]
    assert not stray.exists() and shadow.path.exists()
    shadow.remove()
