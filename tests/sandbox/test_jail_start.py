"""A run bubblewrap could not start is not a test run: it never reached the code, so it must
neither count as the tests failing (a fix asked of the model) nor as a test-first check's "fails
on the old code". Real bwrap, real pytest, a real shadow of a real repository."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_engineer.sandbox.bubblewrap import Jail, JailFailed, jail_for
from tui_engineer.sandbox.bwrap_program import require_bwrap
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.vcs.shadow import Shadow

PYTEST = "python -m pytest -q"


@pytest.fixture
def repo_and_shadow(make_repo) -> Iterator[tuple[Path, Path]]:
    root = make_repo()
    made = Shadow.create(root, session_id="jail-start")
    yield root, made.path
    made.remove()


def _jailed(root: Path) -> LocalSandbox:
    return LocalSandbox(jail=jail_for(root, root / ".git" / "objects", [], network=False))


@pytest.mark.parametrize("started_early", [False, True], ids=["made-then", "started-early"])
async def test_a_data_folder_removed_mid_session_is_made_again_and_the_tests_run(
    repo_and_shadow: tuple[Path, Path], tmp_path: Path, started_early: bool
) -> None:
    """The affected-tests data lives in the user's cache folder, mounted writable into every
    run: a user who clears that cache mid-session got every later run "failed" (exit code 1 in
    0.0s, bubblewrap's "Can't find source path"), and the model was asked to fix it."""
    root, shadow = repo_and_shadow
    sandbox = _jailed(root)
    data = tmp_path / "cache" / "selection"
    sandbox.allow_writes(data)
    first = await sandbox.run_tests(shadow, PYTEST, timeout=60)
    shutil.rmtree(tmp_path / "cache")
    if started_early:  # the run started while the model writes (prewarm) cannot start either
        await sandbox.prewarm(shadow, PYTEST)
    again = await sandbox.run_tests(shadow, PYTEST, timeout=60)
    assert first.structured and first.ok, first.output_tail
    assert again.structured and again.ok, again.output_tail
    assert (again.passed, again.failed) == (first.passed, first.failed)
    assert data.is_dir()
    await sandbox.close()


async def test_a_sandbox_that_cannot_start_says_so_and_reports_no_test_run(
    repo_and_shadow: tuple[Path, Path],
) -> None:
    """bubblewrap failing before the command starts (here: a folder it must hide cannot be made
    on the read-only root) raises a clear error with bwrap's own words, never a failing run."""
    jail = Jail(hidden=(Path("/no-such-folder-to-hide"),), bwrap=require_bwrap())
    with pytest.raises(JailFailed) as raised:
        await LocalSandbox(jail=jail).run_tests(repo_and_shadow[1], PYTEST, timeout=60)
    message = str(raised.value)
    assert "bwrap: " in message and "/no-such-folder-to-hide" in message
    assert "did not run" in message and "--sandbox" in message


async def test_a_command_that_prints_like_bwrap_is_still_a_test_run(
    repo_and_shadow: tuple[Path, Path],
) -> None:
    """Only bubblewrap's own start failure is told apart: a test command of the user's that
    fails with a line that looks like bwrap's is a failing run like any other."""
    command = "echo 'bwrap: pretend' && exit 1"
    root, shadow = repo_and_shadow
    report = await _jailed(root).run_tests(shadow, command, timeout=60)
    assert report.exit_code == 1 and not report.ok
