"""A full disk during an accept (issue 52, parts 1-2): the step's files reach the user's tree
whole or not at all, the error names the folder that is full, and the next start, with space
freed, writes them from the commit. A real small file system (a tmpfs: tests/disk_support.py
mounts it, or runs the test in a user namespace where it can), real git."""

from __future__ import annotations

import os
from pathlib import Path

import git as git_errors
import pytest

from tests.conftest import git
from tui_engineer.base.errors import UserError
from tui_engineer.vcs.accept_recovery import recover_interrupted_accept
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.journal import JOURNAL
from tui_engineer.vcs.shadow import Shadow

OLD = b"old contents\n"


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
    assert " free, " in said and " needed)" in said, said  # how much room is missing
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


def test_a_full_disk_anywhere_is_named_not_called_a_bug(small_disk: Path, capsys) -> None:
    """ENOSPC from any write (here a real one on a full file system, and git's own words for
    it) ends the command with the folder named and exit 2, never 'This is a bug' (exit 70)."""
    from tui_engineer.cli.launch import reported

    target = small_disk / "record.jsonl"

    def write_a_record(argv: list[str]) -> int:
        target.write_bytes(b"x" * 3_000_000)  # more than the 2 MB file system holds
        return 0

    assert reported(write_a_record, []) == 2
    said = capsys.readouterr().err
    assert "No space left on device" in said and "bug" not in said
    assert "needed" in said, said

    def git_status(argv: list[str]) -> int:
        raise git_errors.GitCommandError(
            ["git", "status"],
            128,
            b"fatal: Unable to create '/r/.git/index.lock': No space left on device",
        )

    assert reported(git_status, []) == 2
    said = capsys.readouterr().err
    assert "/r/.git/index.lock" in said and "bug" not in said and "needed" in said


def test_a_full_disk_while_the_models_edit_is_written_is_not_the_models_fault(
    small_disk: Path,
) -> None:
    """ENOSPC in the shadow went to the model as its edit's fault, and the fix call re-sent
    the reply until the prompt no longer fit. Now it is the machine's: DiskFull, no EditError."""
    from tui_engineer.base.disk import DiskFull
    from tui_engineer.edits import EditError, apply_edits
    from tui_engineer.edits.types import WriteFile

    (small_disk / "app.py").write_text("X = 1\n")
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    (small_disk / "filler").write_bytes(b"\0" * (free - 100_000))
    big = WriteFile("data.py", "X = '" + "x" * 500_000 + "'\n")
    with pytest.raises(DiskFull) as err:
        apply_edits(small_disk, [big])
    assert not isinstance(err.value, EditError)
    assert "No space left on device" in str(err.value) and str(small_disk) in str(err.value)
    assert "488.3 KB needed" in str(err.value) or "to write" in str(err.value), str(err.value)
    assert sorted(p.name for p in small_disk.iterdir()) == ["app.py", "filler"]  # no half file


def full(disk: Path) -> Path:
    """A file taking every byte of `disk` that is left."""
    stats = os.statvfs(disk)
    filler = disk / "filler"
    filler.write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize))
    return filler


def test_an_accept_on_a_full_disk_is_refused_with_the_room_named_and_can_be_made_again(
    small_disk: Path,
) -> None:
    """No room at all when the human accepts: git cannot write the step's files into the
    repository's objects (once git status's index.lock, 'Out of diskspace', which was exit
    70). A refusal (the step stays to be accepted again) naming that folder and the room; once
    space is freed, the same accept commits."""
    from tui_engineer.vcs.accept_journal import NoRoomToAccept

    root = small_disk / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("X = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    shadow = Shadow.create(root, session_id="no-room")
    (shadow.path / "app.py").write_text("X = 2\n")
    filler = full(small_disk)
    with pytest.raises(NoRoomToAccept) as err:
        accept(shadow, title="Two")
    said = str(err.value)
    assert "No space left on device in " in said and str(root / ".git") in said, said
    assert " free, " in said and "needed" in said and "accept again" in said, said
    assert "bug" not in said
    filler.unlink()
    assert git(root, "log", "--format=%s") == "initial"
    assert (root / "app.py").read_text() == "X = 1\n"
    assert not list((root / ".git").glob("*.lock")) and not (root / ".git" / JOURNAL).exists()
    accept(shadow, title="Two")  # the human frees space and presses a again
    assert git(root, "log", "--format=%s") == "Two\ninitial"
    assert (root / "app.py").read_text() == "X = 2\n" and git(root, "status", "--porcelain") == ""
    shadow.remove()
