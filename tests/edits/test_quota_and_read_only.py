"""An over-quota or read-only disk while the model's edit is written, and met anywhere else
(issue 52): the machine's, said with the folder (and, over quota, the room needed), never sent
to the model. A quota and a read-only mount cannot be made here without root, so the kernel's
errno is raised at the write the writer really makes (os.replace, after its temp file was
written whole); ENOSPC itself is tested on a real small file system
(tests/vcs/test_accept_disk_full.py)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tui_engineer.base.disk import DiskFull, disk_trouble
from tui_engineer.edits import EditError, apply_edits
from tui_engineer.edits.types import WriteFile


@pytest.mark.parametrize(
    ("code", "words", "how_much"),
    [
        (errno.EDQUOT, "Disk quota exceeded in", "needed beyond your quota"),
        (errno.EROFS, "Read-only file system:", "cannot be written"),
    ],
)
def test_the_models_edit_on_a_disk_over_quota_or_read_only_is_the_machines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str, how_much: str
) -> None:
    (tmp_path / "app.py").write_text("X = 1\n")
    real_replace = os.replace

    def refused(src, dst, *args, **kwargs):
        if str(dst).startswith(str(tmp_path)):
            raise OSError(code, os.strerror(code), str(dst))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(DiskFull) as err:
        apply_edits(tmp_path, [WriteFile("app.py", "X = 2\n")])
    monkeypatch.undo()
    said = str(err.value)
    assert not isinstance(err.value, EditError)  # not the model's to fix
    assert words in said and str(tmp_path) in said and how_much in said, said
    assert (tmp_path / "app.py").read_text() == "X = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.py"]  # no temp file left


def test_a_read_only_file_system_is_said_so_whatever_the_errno(tmp_path: Path) -> None:
    """git's own words for a read-only disk name it too, with the file."""
    import git

    err = git.GitCommandError(
        ["git", "status"], 128, f"fatal: Unable to create '{tmp_path}/.git/index.lock': "
        "Read-only file system"
    )  # fmt: skip
    full = disk_trouble(err)
    assert full is not None and "Read-only file system" in str(full)
    assert str(tmp_path / ".git") in str(full) or str(tmp_path) in str(full)
