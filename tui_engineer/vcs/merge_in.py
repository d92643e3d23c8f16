"""The user's own edits, made in their tree while a step is under review, taken into the step:
a three-way merge (git merge-file) of the proposal's file, the baseline's and the user's, written
in the shadow; the step is then tested again like a hand edit.

A path taken in is remembered on the shadow (`Shadow.taken`): the accept may then write the
step's version over the user's file, but only while it still holds every edit the user made
there (`edits_included`), so nothing of theirs is lost, whatever was dropped or edited since.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from tui_engineer.base.safe_git import shadow_git_full_env
from tui_engineer.vcs.repo import GitRefused
from tui_engineer.vcs.shadow import Shadow


def _baseline_bytes(shadow: Shadow, path: str) -> bytes:
    """The file as the baseline has it (empty when the baseline has no such file)."""
    done = subprocess.run(
        ["git", "-C", str(shadow.path), "cat-file", "blob", f"{shadow.baseline}:{path}"],
        capture_output=True,
        env=shadow_git_full_env(),
    )
    return done.stdout if done.returncode == 0 else b""


def merge3(ours: bytes, base: bytes, theirs: bytes) -> tuple[bytes, int]:
    """git merge-file of the three versions: the result, and how many conflicts it marks."""
    with tempfile.TemporaryDirectory(prefix="tui-engineer-merge-") as scratch:
        files = []
        for name, data in (("proposal", ours), ("base", base), ("yours", theirs)):
            file = Path(scratch) / name
            file.write_bytes(data)
            files.append(str(file))
        done = subprocess.run(
            ["git", "merge-file", "-p", "-L", "proposal", "-L", "before", "-L", "your edit",
             *files],
            capture_output=True,
        )  # fmt: skip
    if done.returncode < 0 or done.returncode > 127:
        raise GitRefused(f"git merge-file failed: {done.stderr.decode(errors='replace')}")
    return done.stdout, done.returncode


def take_user_edits(shadow: Shadow, paths: list[str]) -> list[str]:
    """Merge the user's edits to `paths` (their file against the baseline) into the proposal's
    files in the shadow. Returns the paths merged with conflicts (marked in the file)."""
    conflicted: list[str] = []
    for path in paths:
        mine, ours = shadow.root / path, shadow.path / path
        if not mine.is_file() or not ours.is_file() or mine.is_symlink():
            continue  # deleted on one side: nothing to merge line by line
        merged, conflicts = merge3(ours.read_bytes(), _baseline_bytes(shadow, path),
                                   mine.read_bytes())  # fmt: skip
        ours.write_bytes(merged)
        shadow.taken.add(path)
        if conflicts:
            conflicted.append(path)
    return conflicted


def edits_included(shadow: Shadow, path: str) -> bool:
    """The step's version of a path taken in holds every edit the user made to it."""
    mine, ours = shadow.root / path, shadow.path / path
    if not mine.is_file() or not ours.is_file():
        return False
    committed = ours.read_bytes()
    merged, conflicts = merge3(committed, _baseline_bytes(shadow, path), mine.read_bytes())
    return conflicts == 0 and merged == committed
