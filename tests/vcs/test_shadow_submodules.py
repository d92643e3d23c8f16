"""Submodules are present in the shadow (issue 10, finding 7): real git repositories with a
real submodule, checked out from the user's local submodule repository (no network), and a real
pytest run under the local sandbox that imports from it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, create, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.config import Settings
from tui_engineer.engine import events as ev
from tui_engineer.sandbox.factory import make_sandbox
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.shadow import Shadow

USES_LIB = """import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "vendor" / "lib"))

from mylib import VALUE


def test_lib():
    assert VALUE == 42
"""


def _library(tmp_path: Path) -> Path:
    lib = tmp_path / "lib-upstream"
    (lib / "mylib").mkdir(parents=True)
    (lib / "mylib" / "__init__.py").write_text("VALUE = 42\n")
    git(lib, "init", "-q", "-b", "main")
    git(lib, "add", ".")
    git(lib, "commit", "-q", "-m", "lib")
    return lib


@pytest.fixture
def with_submodule(make_repo, tmp_path: Path) -> Path:
    root = make_repo({"tests/test_lib.py": USES_LIB, "calc.py": "X = 1\n"})
    lib = _library(tmp_path)
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(root, "commit", "-q", "-m", "vendor lib")
    # The upstream moves on and disappears: the shadow must use the user's local copy only.
    subprocess.run(["rm", "-rf", str(lib)], check=True)
    return root


async def test_a_submodule_is_checked_out_in_the_shadow(with_submodule: Path) -> None:
    root = with_submodule
    shadow = Shadow.create(root, session_id="sub")
    try:
        assert (shadow.path / "vendor/lib/mylib/__init__.py").read_text() == "VALUE = 42\n"
        sandbox = make_sandbox(Settings(sandbox="local"), root)  # bubblewrap, the repo hidden
        report = await sandbox.run_tests(shadow.path, "python -m pytest -q", timeout=60)
        assert report.exit_code == 0 and report.passed == 1, report.output_tail
        # git works in it too: its objects are shown, read-only, inside the hidden repository.
        log = await sandbox.run_tests(shadow.path, "git -C vendor/lib log -1 --oneline", timeout=30)
        assert log.exit_code == 0 and "lib" in log.output_tail, log.output_tail
        assert shadow.changes() == []  # the checked-out submodule is not a change
        (shadow.path / "calc.py").write_text("X = 2\n")
        sha = accept(shadow, title="Bump X")
    finally:
        shadow.remove()
    assert git(root, "rev-parse", "HEAD") == sha
    assert git(root, "show", "--stat", "--format=", "HEAD").split()[0] == "calc.py"
    assert git(root, "status", "--porcelain") == ""  # the user's submodule untouched too


def test_a_submodule_the_user_never_checked_out_stays_empty(with_submodule, tmp_path) -> None:
    """A clone without --recurse-submodules has no local copy: nothing is fetched, no error."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(with_submodule), str(clone))
    shadow = Shadow.create(clone, session_id="nosub")
    try:
        assert (shadow.path / "vendor/lib").is_dir()
        assert list((shadow.path / "vendor/lib").iterdir()) == []
        assert shadow.changes() == []
        assert shadow.empty_submodules == ("vendor/lib",)
    finally:
        shadow.remove()


@whole_session
async def test_the_session_says_which_submodules_the_tests_find_empty(
    with_submodule: Path, tmp_path: Path, scripted_server: ScriptedServer, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(with_submodule), str(clone))
    # Importing the library would fail: this test is about the notice.
    (clone / "tests/test_lib.py").write_text("def test_ok():\n    pass\n")
    git(clone, "commit", "-q", "-am", "no lib test")
    scripted_server.script(Reply(text=create("tests/test_x.py", "def test_x():\n    pass\n")))
    result, seen = await run_headless(clone, "add a test", scripted_server.base_url, plan=False)
    notes = [n.message for n in seen.of(ev.Notice)]
    assert any("vendor/lib not checked out" in n and "git submodule update" in n for n in notes)
    assert result.exit_code == 0
