"""A shadow is made from a removed one's files (issue 47): removing a shadow keeps its checkout
as one of the repository's spares, and the next shadow (the next session, a step prepared
ahead) takes one and rewrites only what differs from its baseline, exactly as a fresh checkout
would have it (real git repositories). The pool of spares: test_spare_pool.py."""

from __future__ import annotations

import os
import stat
import subprocess

from tests.conftest import git
from tui_engineer.vcs.one_session import live_sessions
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare import pool_for, slots
from tui_engineer.vcs.spare_ahead import AHEAD


def _pool(root):
    with open_repo(root) as repo:
        return pool_for(shadow_home(repo))


def _spare(root):
    """The repository's one spare (these tests keep one at a time)."""
    kept = slots(_pool(root))
    assert len(kept) == 1, kept
    return _pool(root) / kept[0]


def _tree_listing(folder):
    """Every path under `folder` outside .git with its kind, mode bits that git keeps, bytes."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            rel = os.path.relpath(full, folder)
            if stat.S_ISDIR(info.st_mode):
                found[rel] = "dir"
            else:
                with open(full, "rb") as handle:
                    found[rel] = (bool(info.st_mode & stat.S_IXUSR), handle.read())
    return found


def test_a_second_shadow_reuses_the_first_ones_unchanged_files(make_repo):
    root = make_repo()
    first = Shadow.create(root, session_id="s1")
    unchanged = (first.path / "tests" / "test_calc.py").stat().st_ino
    first.remove()
    assert not first.path.exists()
    second = Shadow.create(root, session_id="s2")
    try:
        # The same file, not a new copy: making the shadow wrote nothing it did not change.
        assert (second.path / "tests" / "test_calc.py").stat().st_ino == unchanged
        assert slots(_pool(root)) == []  # taken: one shadow holds it at a time
    finally:
        second.remove()


def test_a_reused_shadow_is_exactly_the_new_baseline(make_repo):
    root = make_repo()
    first = Shadow.create(root, session_id="s1")
    # What a step and its test runs leave behind: an edit, a deletion, a new file, an ignored
    # cache, an empty folder, an executable bit, a nested folder of new files.
    (first.path / "calc.py").write_text("broken\n")
    (first.path / "tests" / "test_calc.py").unlink()
    (first.path / "new.py").write_text("x = 1\n")
    (first.path / ".gitignore").write_text("*.pyc\n")
    (first.path / "cached.pyc").write_bytes(b"\0")
    (first.path / "empty").mkdir()
    (first.path / "deep" / "er").mkdir(parents=True)
    (first.path / "deep" / "er" / "x.txt").write_text("x\n")
    os.chmod(first.path / "calc.py", 0o755)
    assert ("A", "new.py") in first.changed_files()  # staged: its blobs are in the shadow's store
    first.remove()
    # Meanwhile the user commits: the next baseline differs from the spare's.
    (root / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    git(root, "commit", "-qam", "swap")
    second = Shadow.create(root, session_id="s2")
    try:
        # As a fresh checkout has it: the user's tree at that commit, file for file.
        assert _tree_listing(second.path) == _tree_listing(root)
        assert git(second.path, "rev-parse", "HEAD") == git(root, "rev-parse", "HEAD")
        assert second.diff() == "" and second.changed_files() == []
        # The last session's own objects went with its refs: a spare does not grow.
        objects = second.path / ".git" / "objects"
        own = [p for p in objects.rglob("*") if p.is_file() and p.parent.name != "info"]
        assert own == [], own
    finally:
        second.remove()


def test_what_a_test_planted_in_the_spares_git_folder_is_gone(make_repo):
    """A test run uncontained (sandbox none) may write the shadow's .git: the next session's
    shadow starts from fresh git metadata, never from what it planted."""
    root = make_repo()
    first = Shadow.create(root, session_id="s1")
    git(first.path, "config", "alias.st", "status")
    git(first.path, "config", "core.hooksPath", "/nowhere")
    (first.path / ".git" / "info").mkdir(exist_ok=True)
    (first.path / ".git" / "info" / "exclude").write_text("calc.py\n")
    first.remove()
    second = Shadow.create(root, session_id="s2")
    try:
        config = (second.path / ".git" / "config").read_text()
        assert "alias" not in config and "hooksPath" not in config
        assert not (second.path / ".git" / "info" / "exclude").exists()
        assert "s2" in (second.path / ".git" / "tui-engineer-session").read_text()
        (second.path / "calc.py").write_text("changed\n")
        assert second.changed_files() == [("M", "calc.py")]
    finally:
        second.remove()


def test_no_more_spares_are_kept_than_the_pool_holds(make_repo):
    root = make_repo()
    made = [Shadow.create(root, session_id=f"s{n}", spares=2) for n in range(3)]
    for shadow in made:
        shadow.remove()  # the third finds the two slots full: it is deleted
    assert not any(shadow.path.exists() for shadow in made)
    listed = subprocess.run(["ls", _pool(root)], capture_output=True, text=True).stdout
    assert listed.split() == ["0", "1"]


def test_a_broken_spare_is_replaced_by_a_fresh_checkout(make_repo):
    root = make_repo()
    first = Shadow.create(root, session_id="s1")
    first.remove()
    (_spare(root) / ".git" / "index").write_bytes(b"not an index")
    second = Shadow.create(root, session_id="s2")
    try:
        assert (second.path / "calc.py").read_text() == (root / "calc.py").read_text()
        assert second.changed_files() == []
    finally:
        second.remove()


def test_a_spare_that_cannot_be_deleted_is_moved_aside_not_built_on(make_repo, monkeypatch):
    """A test run may leave what cannot be deleted (a folder without permissions; as root the
    deletion is stood in for): the new shadow is never made on top of what is left."""
    root = make_repo()
    first = Shadow.create(root, session_id="s1")
    (first.path / "left.txt").write_text("a run's leftover\n")
    first.remove()
    (_spare(root) / ".git" / "index").write_bytes(b"not an index")
    monkeypatch.setattr("tui_engineer.vcs.spare.remove_tree", lambda path: None)
    second = Shadow.create(root, session_id="s2")
    monkeypatch.undo()
    try:
        assert not (second.path / "left.txt").exists()
        assert second.changed_files() == []
        aside = [p.name for p in second.path.parent.iterdir() if ".broken-" in p.name]
        assert aside and (second.path.parent / aside[0] / "left.txt").exists()
    finally:
        second.remove()


def test_a_shadow_whose_files_a_thread_still_stages_is_kept_only_after_it(make_repo):
    """A step prepared ahead, cancelled while a thread staged its shadow (`git add -A` takes
    seconds at 40,000 files), is removed at once: its shadow must not reach the pool of spares,
    where the next shadow takes it, while that thread's git still writes its index."""
    import threading

    from tui_engineer.base.safe_git import index_lock

    root = make_repo()
    shadow = Shadow.create(root, session_id="s1")
    staging, done = threading.Event(), threading.Event()

    def stage() -> None:
        with index_lock(shadow.path):
            staging.set()
            done.wait(10)

    stager = threading.Thread(target=stage)
    stager.start()
    staging.wait(10)
    remover = threading.Thread(target=shadow.remove)
    remover.start()
    remover.join(0.5)
    try:
        assert remover.is_alive() and shadow.path.is_dir()  # waits: still the shadow's
        assert slots(_pool(root)) == []
    finally:
        done.set()
        stager.join()
        remover.join(10)
    assert not shadow.path.exists() and len(slots(_pool(root))) == 1  # then kept as a spare


def test_a_spare_being_made_ahead_is_no_session_another_process_is_told_of(make_repo):
    repo = make_repo()
    ahead = Shadow.create(repo, session_id=f"{AHEAD}4242")
    session = Shadow.create(repo, session_id="20261129-120000-abcd")
    try:
        assert [s.session_id for s in live_sessions(repo)] == ["20261129-120000-abcd"]
    finally:
        ahead.remove()
        session.remove()
