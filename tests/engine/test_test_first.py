"""The parts of a test-first check: which files are tests, and the shadow with the step's code
taken out for the "before" run (real git, a real shadow worktree)."""

from __future__ import annotations

import pytest

from tests.conftest import SAMPLE_FILES
from tui_engineer.engine.steps.test_first import is_test_path, old_code, split_changes
from tui_engineer.vcs.shadow import Shadow


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_calc.py", True),
        ("test_calc.py", True),
        ("pkg/calc_test.py", True),
        ("src/tests/helpers.py", True),
        ("conftest.py", True),
        ("web/button.test.ts", True),
        ("calc.py", False),
        ("pkg/testing_utils.py", False),
        ("contest.py", False),
    ],
)
def test_test_files_are_told_by_folder_and_name(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


def test_the_old_code_is_back_for_the_while_and_the_step_after(make_repo) -> None:
    repo = make_repo({**SAMPLE_FILES, "old.py": "OLD = 1\n", "gone.py": "GONE = 1\n"})
    shadow = Shadow.create(repo, session_id="tf")
    try:
        root = shadow.path
        (root / "calc.py").write_text("def add(a, b):\n    return a + b\n\n\ndef mul(): ...\n")
        (root / "new.py").write_text("NEW = 1\n")
        (root / "gone.py").unlink()
        (root / "old.py").rename(root / "renamed.py")
        (root / "tests/test_new.py").write_text("def test_new():\n    import new\n")
        step = {p: (root / p).read_text() for p in ("calc.py", "new.py", "renamed.py")}
        tests, code = split_changes(shadow.changes())
        assert [c.path for c in tests] == ["tests/test_new.py"]

        with old_code(shadow, code):
            assert (root / "calc.py").read_text() == SAMPLE_FILES["calc.py"]
            assert not (root / "new.py").exists() and not (root / "renamed.py").exists()
            assert (root / "gone.py").read_text() == "GONE = 1\n"
            assert (root / "old.py").read_text() == "OLD = 1\n"
            assert (root / "tests/test_new.py").is_file()  # the step's test stays

        assert {p: (root / p).read_text() for p in step} == step
        assert not (root / "gone.py").exists() and not (root / "old.py").exists()
    finally:
        shadow.remove()


def test_the_step_is_put_back_even_when_the_run_on_the_old_code_fails(tmp_path) -> None:
    from tui_engineer.engine.steps.test_first import swapped

    (tmp_path / "calc.py").write_text("new\n")
    with (
        pytest.raises(RuntimeError),
        swapped(tmp_path, {"calc.py": b"new\n"}, {"calc.py": b"old\n"}),
    ):
        assert (tmp_path / "calc.py").read_text() == "old\n"
        raise RuntimeError("the sandbox went away")
    assert (tmp_path / "calc.py").read_text() == "new\n"
