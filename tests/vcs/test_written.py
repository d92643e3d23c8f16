"""Who wrote a shadow's changes (vcs/written.py): a path changed between test runs is its
authors', one changed only during runs is the tests'. Real git repos; a test run is what its
bracket says (engine/steps/test_writes.py), its writes made here by hand, as a test's would be."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.engine.reviews.hunks import HunkRef, kept_plan
from tui_engineer.vcs.partial import build_kept, restore_tree, save_tree
from tui_engineer.vcs.shadow import Shadow

FILES = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "Cargo.lock": "version = 3\n",
    "tests/snapshot.txt": "old snapshot\n",
}


@pytest.fixture
def shadow(make_repo):
    made = Shadow.create(make_repo(FILES), session_id="written")
    yield made
    made.remove()


def a_run(shadow: Shadow, writes: Callable[[Path], None]) -> None:
    shadow.tests_starting()
    writes(shadow.path)
    shadow.tests_ended()


def baseline_run(root: Path) -> None:
    """What a suite writes: new files, a tracked file rewritten, another deleted."""
    (root / "coverage.dat").write_text("1\n")
    (root / "Cargo.lock").write_text("version = 4\n")
    (root / "tests" / "snapshot.txt").unlink(missing_ok=True)


def fix(root: Path) -> None:
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")


def paths(changes) -> list[tuple[str, str]]:
    return [(c.status, c.path) for c in changes]


def test_what_only_a_test_run_wrote_is_listed_apart(shadow: Shadow) -> None:
    a_run(shadow, baseline_run)
    fix(shadow.path)
    a_run(shadow, lambda root: (root / "coverage.dat").write_text("2\n"))

    assert paths(shadow.changes()) == [("M", "calc.py")]
    assert "calc.py" in shadow.diff() and "Cargo.lock" not in shadow.diff()
    assert paths(shadow.written_changes()) == [
        ("M", "Cargo.lock"),
        ("A", "coverage.dat"),
        ("D", "tests/snapshot.txt"),
    ]
    assert "+version = 4" in shadow.written_diff()


def test_a_reviews_listing_is_the_three_lists_from_one_staging(shadow: Shadow) -> None:
    """What a review shows (the changes, what the tests wrote, its diff) comes from one
    staging of the files, and is what each of the three says apart."""
    assert shadow.listing() == ([], [], "")
    a_run(shadow, baseline_run)
    fix(shadow.path)
    (shadow.path / "new.py").write_text("x = 1\n")
    changes, written, diff = shadow.listing()
    assert paths(changes) == [("M", "calc.py"), ("A", "new.py")]
    assert (changes, written, diff) == (
        shadow.changes(),
        shadow.written_changes(),
        shadow.written_diff(),
    )
    assert paths(written)[0] == ("M", "Cargo.lock") and "+version = 4" in diff


def test_a_file_an_author_wrote_stays_theirs_whatever_a_test_does_to_it(shadow: Shadow) -> None:
    a_run(shadow, baseline_run)
    fix(shadow.path)
    (shadow.path / "Cargo.lock").write_text("version = 3\n# pinned by the model\n")
    (shadow.path / "coverage.dat").write_text("the human's own\n")  # a hand edit
    a_run(shadow, baseline_run)  # rewrites both

    assert paths(shadow.changes()) == [("M", "Cargo.lock"), ("M", "calc.py"), ("A", "coverage.dat")]
    assert paths(shadow.written_changes()) == [("D", "tests/snapshot.txt")]


def test_before_any_test_run_everything_is_the_step(shadow: Shadow) -> None:
    fix(shadow.path)
    (shadow.path / "coverage.dat").write_text("1\n")
    assert paths(shadow.changes()) == [("M", "calc.py"), ("A", "coverage.dat")]
    assert shadow.written_changes() == [] and shadow.written_diff() == ""


def test_a_reset_forgets_who_wrote_what(shadow: Shadow) -> None:
    a_run(shadow, baseline_run)
    shadow.reset()
    (shadow.path / "coverage.dat").write_text("now the model's\n")
    assert paths(shadow.changes()) == [("A", "coverage.dat")]
    assert shadow.written_changes() == []


def test_the_step_tree_leaves_out_what_the_tests_wrote(shadow: Shadow) -> None:
    a_run(shadow, baseline_run)
    fix(shadow.path)
    tree = shadow.step_tree()
    listed = git(shadow.path, "ls-tree", "-r", "--name-only", tree).splitlines()
    assert listed == ["Cargo.lock", "calc.py", "tests/snapshot.txt"]
    assert git(shadow.path, "show", f"{tree}:Cargo.lock") == "version = 3"
    assert "a + b" in git(shadow.path, "show", f"{tree}:calc.py")
    assert (shadow.path / "coverage.dat").exists()  # the files themselves stay as they are


def test_a_kept_subset_that_is_put_back_keeps_who_wrote_what(shadow: Shadow) -> None:
    """A partial accept rebuilds the shadow from the baseline; when the whole proposal is put
    back (its kept hunks failed), the files the tests wrote are still theirs."""
    a_run(shadow, baseline_run)
    fix(shadow.path)
    (shadow.path / "new.py").write_text("x = 1\n")
    full, written = save_tree(shadow), shadow.written.copy()
    build_kept(shadow, full, kept_plan(shadow.diff(), {HunkRef("new.py", 0)}))
    assert paths(shadow.changes()) == [("M", "calc.py")]
    assert not (shadow.path / "coverage.dat").exists()
    restore_tree(shadow, full, written)

    assert paths(shadow.changes()) == [("M", "calc.py"), ("A", "new.py")]
    assert [p for _, p in paths(shadow.written_changes())] == [
        "Cargo.lock",
        "coverage.dat",
        "tests/snapshot.txt",
    ]


def test_a_name_that_is_not_utf8_is_carried_exactly(shadow: Shadow) -> None:
    name = os.fsdecode(b"caf\xe9.dat")  # Latin-1, as a test on Linux may name its output
    a_run(shadow, lambda root: (root / name).write_text("1\n"))
    fix(shadow.path)

    assert paths(shadow.written_changes()) == [("A", name)]
    assert paths(shadow.changes()) == [("M", "calc.py")]
    tree = shadow.step_tree()
    listed = git(shadow.path, "ls-tree", "-r", "--name-only", tree).splitlines()
    assert listed == ["Cargo.lock", "calc.py", "tests/snapshot.txt"]
