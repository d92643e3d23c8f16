"""Steps prepared side by side on a file system with reflinks (vcs/spare_clone.py): a new
shadow beside a live one is a clone of its files, so it costs the disk of what it changes, and
it is exactly the baseline whatever the live one was in the middle of. Elsewhere it is a
checkout, as before. Real git, real file systems: the reflink tests need a folder on btrfs or
XFS (reflink=1) named by REFLINK_TEST_DIR (.ci/prepare_full_run mounts one)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tui_engineer.engine.ahead.stacked import stacked_shadow
from tui_engineer.vcs import spare_clone
from tui_engineer.vcs.shadow import Shadow

FILES = 40
SIZE = 256 * 1024  # 10 MiB of files in all: far above a clone's own metadata
MIB = 1024 * 1024
NO_REFLINKS = (
    "no folder on a file system with reflinks: set REFLINK_TEST_DIR to one on btrfs or "
    "XFS made with reflink=1 (.ci/prepare_full_run mounts one)"
)


@pytest.fixture
def reflink_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The user cache (where shadows live) on a file system that clones files."""
    named = os.environ.get("REFLINK_TEST_DIR")
    if not named or not Path(named).is_dir():
        pytest.skip(NO_REFLINKS)
    cache = Path(named) / f"cache-{os.getpid()}-{tmp_path.name}"
    cache.mkdir()
    sample = cache / "sample"
    sample.write_bytes(b"x" * 4096)
    if not spare_clone.can_clone(sample, cache):
        pytest.skip(f"{named} does not clone files: " + NO_REFLINKS)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    yield cache
    subprocess.run(["rm", "-rf", str(cache)], check=False)


def _big_repo(make_repo) -> Path:
    files = {f"data/part{k:02}.txt": _text(k) for k in range(FILES)}
    files[".gitignore"] = "*.log\n"
    return make_repo(files)


def _text(k: int) -> str:
    line = f"line of part {k} ".ljust(63, "-") + "\n"
    return line * (SIZE // len(line))


def _used(folder: Path) -> int:
    """Bytes in use on `folder`'s file system, once what is written has reached it."""
    os.sync()
    info = os.statvfs(folder)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=path, check=True, capture_output=True, text=True
    ).stdout


def test_a_step_prepared_beside_the_session_costs_the_disk_of_what_it_changes(
    make_repo, reflink_cache: Path
) -> None:
    repo = _big_repo(make_repo)
    before = _used(reflink_cache)
    session = Shadow.create(repo, session_id="s-clone")
    checkout = _used(reflink_cache) - before
    assert checkout > FILES * SIZE * 0.9, "the session's own shadow is a checkout"

    # The session's shadow mid-step: the model changed a file, a test run wrote new ones.
    (session.path / "data" / "part00.txt").write_text("the model's version\n")
    (session.path / "data" / "new.py").write_text("print('new')\n")
    (session.path / "run.log").write_text("a test run's log\n")
    before = _used(reflink_cache)
    ahead = stacked_shadow(session, "s-clone-next0", session.baseline)
    beside = _used(reflink_cache) - before

    assert beside < checkout / 5, f"{beside / MIB:.1f} MiB beside a {checkout / MIB:.1f} MiB one"
    assert ahead.from_spare
    # Exactly the baseline: no file of the session's step, no leftover, ignored ones included.
    assert _git(ahead.path, "status", "--porcelain", "--ignored", "--untracked-files=all") == ""
    assert (ahead.path / "data" / "part00.txt").read_text() == _text(0)
    assert ahead.changes() == []
    # Each its own: a write in one is not seen in the other.
    (ahead.path / "data" / "part01.txt").write_text("the next step's version\n")
    assert (session.path / "data" / "part01.txt").read_text() == _text(1)
    assert (session.path / "data" / "part00.txt").read_text() == "the model's version\n"
    assert [c.path for c in ahead.changes()] == ["data/part01.txt"]
    for shadow in (ahead, session):
        shadow.remove()


def test_without_reflinks_a_shadow_beside_a_live_one_is_a_checkout(make_repo) -> None:
    repo = make_repo({"a.py": "x = 1\n", "b.py": "y = 2\n"})
    session = Shadow.create(repo, session_id="s-plain")
    if spare_clone.can_clone(session.path / ".git" / "HEAD", session.path.parent):
        pytest.skip("this temporary folder clones files: the reflink test covers it")
    (session.path / "a.py").write_text("x = 3\n")
    ahead = stacked_shadow(session, "s-plain-next0", session.baseline)

    assert not ahead.from_spare
    assert (ahead.path / "a.py").read_text() == "x = 1\n"
    assert ahead.changes() == []
    assert not list(session.path.parent.glob(".clone-probe-*"))
    for shadow in (ahead, session):
        shadow.remove()
