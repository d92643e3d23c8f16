"""The user's own edits taken into a step under review (real git): merged three ways in the
shadow; the accept writes over the user's file only while the step holds all their edits."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.merge_in import edits_included, take_user_edits
from tui_engineer.vcs.repo import GitRefused
from tui_engineer.vcs.shadow import Shadow

TEXT = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def shadow(make_repo):
    made = Shadow.create(make_repo({"notes.txt": TEXT}), session_id="merge")
    yield made
    made.remove()


def test_your_edit_is_merged_into_the_proposal_and_committed_without_loss(
    shadow: Shadow,
) -> None:
    (shadow.path / "notes.txt").write_text(TEXT.replace("line 18\n", "line 18, the step's\n"))
    mine = TEXT.replace("line 2\n", "line 2, mine\n")
    (shadow.root / "notes.txt").write_text(mine)
    assert take_user_edits(shadow, ["notes.txt"]) == []
    merged = (shadow.path / "notes.txt").read_text()
    assert "line 2, mine" in merged and "line 18, the step's" in merged
    assert edits_included(shadow, "notes.txt")
    accept(shadow, title="Both")
    assert (shadow.root / "notes.txt").read_text() == merged
    assert git(shadow.root, "status", "--porcelain") == ""


def test_a_step_that_lost_your_edit_is_refused(shadow: Shadow) -> None:
    (shadow.path / "notes.txt").write_text(TEXT.replace("line 18\n", "line 18, the step's\n"))
    mine = TEXT.replace("line 2\n", "line 2, mine\n")
    (shadow.root / "notes.txt").write_text(mine)
    take_user_edits(shadow, ["notes.txt"])
    # Then the step's version loses the user's line (a hunk dropped, an edit by hand...).
    (shadow.path / "notes.txt").write_text(TEXT.replace("line 18\n", "line 18, the step's\n"))
    assert not edits_included(shadow, "notes.txt")
    with pytest.raises(GitRefused, match="Nothing was written"):
        accept(shadow, title="Lost it")
    assert (shadow.root / "notes.txt").read_text() == mine


def test_conflicting_edits_are_marked_in_the_file(shadow: Shadow) -> None:
    (shadow.path / "notes.txt").write_text(TEXT.replace("line 5\n", "line 5, the step's\n"))
    (shadow.root / "notes.txt").write_text(TEXT.replace("line 5\n", "line 5, mine\n"))
    assert take_user_edits(shadow, ["notes.txt"]) == ["notes.txt"]
    merged = (shadow.path / "notes.txt").read_text()
    assert "<<<<<<< proposal" in merged and ">>>>>>> your edit" in merged
