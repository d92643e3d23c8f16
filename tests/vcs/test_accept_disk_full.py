"""A full disk during an accept (issue 52, parts 1-2): the step's files reach the user's tree
whole or not at all, the error names the folder that is full, and the next start, with space
freed, writes them from the commit. A real small file system (tmpfs; skipped where this user
may not mount one), real git."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.base.errors import UserError
from tui_engineer.vcs.accept_journal import recover_interrupted_accept
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.shadow import Shadow

OLD = b"old contents\n"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs at tmp_path/small, unmounted afterwards."""
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_while_the_files_are_written_leaves_no_half_file(small_disk: Path) -> None:
    root = small_disk / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "data").mkdir()
    (root / "data" / "blob.bin").write_bytes(OLD)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    shadow = Shadow.create(root, session_id="disk-full")
    new = os.urandom(500_000)  # random: git cannot compress its object
    (shadow.path / "data" / "blob.bin").write_bytes(new)
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (free - 800_000))  # room for the object, not for the file too
    with pytest.raises(UserError) as err:
        accept(shadow, title="Replace the blob")
    said = str(err.value)
    assert "No space left" in said and str(root) in said, said
    assert "bug" not in said
    assert (root / "data" / "blob.bin").read_bytes() == OLD  # whole, as before
    assert not [p for p in (root / "data").iterdir() if p.name != "blob.bin"]
    filler.unlink()  # the user frees space; the next start writes the step's files
    told = recover_interrupted_accept(root)
    assert told and "its files are now written too" in told and "Kept your edits" not in told
    assert (root / "data" / "blob.bin").read_bytes() == new
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "log", "--format=%s") == "Replace the blob\ninitial"
    shadow.remove()
