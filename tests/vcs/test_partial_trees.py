"""A proposal's hunks kept or dropped: the tree of the kept ones is built in the shadow (real git
repos), and the whole proposal comes back exactly."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tui_engineer.engine.reviews.hunks import WHOLE_FILE, HunkRef, kept_plan, summary, units
from tui_engineer.vcs.partial import build_kept, restore_tree, save_tree
from tui_engineer.vcs.shadow import Shadow

LETTERS = "".join(f"{c}\n" for c in "abcdefghijklmnop")


@pytest.fixture
def shadow(make_repo):
    repo = make_repo(
        {"letters.txt": LETTERS, "old.txt": "old\n", "logo.bin": "\x00\x01", "gone.txt": "bye\n"}
    )
    made = Shadow.create(repo, session_id="partial")
    yield made
    made.remove()


def propose(shadow: Shadow) -> None:
    """Two hunks in letters.txt, a new file, a rename, a binary change and a deletion."""
    text = LETTERS.replace("b\n", "B\n").replace("n\n", "N\nN2\n")
    (shadow.path / "letters.txt").write_text(text)
    (shadow.path / "new.py").write_text("x = 1\n")
    (shadow.path / "old.txt").rename(shadow.path / "renamed.txt")
    (shadow.path / "logo.bin").write_bytes(b"\x00\x02")
    (shadow.path / "gone.txt").unlink()


def test_units_are_each_hunk_and_each_file_without_hunks(shadow: Shadow) -> None:
    propose(shadow)
    refs = [unit.ref for unit in units(shadow.diff())]
    assert refs == [
        HunkRef("gone.txt", 0),
        HunkRef("letters.txt", 0),
        HunkRef("letters.txt", 1),
        HunkRef("logo.bin", WHOLE_FILE),
        HunkRef("new.py", 0),
        HunkRef("renamed.txt", WHOLE_FILE),
    ]
    assert units("") == []
    assert HunkRef("letters.txt", 1).label() == "letters.txt hunk 2"


def test_the_kept_tree_holds_exactly_the_kept_hunks_and_the_whole_comes_back(
    shadow: Shadow,
) -> None:
    propose(shadow)
    full_diff = shadow.diff()
    full = save_tree(shadow)
    dropped = {HunkRef("letters.txt", 0), HunkRef("new.py", 0), HunkRef("gone.txt", 0)}
    plan = kept_plan(full_diff, dropped)
    assert (plan.kept, plan.total) == (3, 6)
    assert summary(plan.kept, plan.total) == "partial: 3 of 6 hunks"
    build_kept(shadow, full, plan)
    letters = (shadow.path / "letters.txt").read_text()
    assert "B\n" not in letters and "b\n" in letters  # the dropped hunk
    assert "N\nN2\n" in letters  # the kept one
    assert not (shadow.path / "new.py").exists()
    assert (shadow.path / "gone.txt").read_text() == "bye\n"  # its deletion was dropped
    assert (shadow.path / "renamed.txt").read_text() == "old\n"
    assert not (shadow.path / "old.txt").exists()
    assert (shadow.path / "logo.bin").read_bytes() == b"\x00\x02"
    assert git(shadow.root, "status", "--porcelain") == ""  # the user's tree never moved
    restore_tree(shadow, full)
    assert shadow.diff() == full_diff


def test_every_hunk_dropped_leaves_the_baseline(shadow: Shadow) -> None:
    propose(shadow)
    diff, full = shadow.diff(), save_tree(shadow)
    build_kept(shadow, full, kept_plan(diff, {unit.ref for unit in units(diff)}))
    assert shadow.diff() == ""
