"""A full disk while the shadow (where the model's edits are tried) is made: named with the
folder and the room its checkout needs, not git's 'Could not reset index file' alone. A real
small file system (tests/disk_support.py), real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.vcs.shadow import Shadow


def test_a_shadow_with_no_room_names_the_folder_and_the_checkout_size(
    small_disk: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's 'Could not reset index file to revision' was all a session said when the cache
    holding the shadow was full."""
    from tui_engineer.base.disk import DiskFull

    monkeypatch.setenv("XDG_CACHE_HOME", str(small_disk / "cache"))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "big.bin").write_bytes(os.urandom(300_000))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    (small_disk / "cache").mkdir()
    stats = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize - 100_000))
    with pytest.raises(DiskFull) as err:
        Shadow.create(root, session_id="no-room")
    said = str(err.value)
    assert "No space left on device in " in said and str(small_disk / "cache") in said, said
    assert "360.0 KB needed" in said, said  # the file's blocks and the shadow's own .git
