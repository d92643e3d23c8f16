"""A step's tests can never touch the user's repository: a hostile test suite runs in the shadow
(real git, real pytest subprocess) and the user's refs, config, hooks and files stay as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.vcs.commit import accept
from tui_engineer.vcs.shadow import Shadow

# Everything a test could do to the repository it finds itself in, plus following a worktree's
# `.git` file back to the user's git folder and planting a hook there.
HOSTILE_TEST = """
import os, subprocess
from pathlib import Path


def sh(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True)


def test_vandalise():
    sh("branch", "-D", "feature")
    sh("config", "core.hooksPath", "/tmp/evil-hooks")
    sh("tag", "t")
    sh("update-ref", "refs/heads/main", "HEAD~1")
    dot = Path(".git")
    if dot.is_file():  # a linked worktree: its gitdir lives in the user's repository
        gitdir = Path(dot.read_text().split(":", 1)[1].strip())
        common = (gitdir / (gitdir / "commondir").read_text().strip()).resolve()
        hooks = common / "hooks"
        hooks.mkdir(exist_ok=True)
        (hooks / "post-commit").write_text("#!/bin/sh\\necho planted > planted.txt\\n")
        (hooks / "post-commit").chmod(0o755)
        with open(common / "config", "a") as f:
            f.write("[user]\\n\\tname = Mallory\\n")
"""


def _git_state(root: Path) -> dict[str, str]:
    hooks = root / ".git" / "hooks"
    return {
        "refs": git(root, "for-each-ref", "--format=%(refname) %(objectname)"),
        "config": (root / ".git" / "config").read_text(),
        "hooks": " ".join(sorted(p.name for p in hooks.iterdir())) if hooks.is_dir() else "",
        "head": git(root, "rev-parse", "HEAD"),
    }


@pytest.fixture
def hostile_repo(make_repo) -> Path:
    root = make_repo({"tests/test_hostile.py": HOSTILE_TEST})
    git(root, "branch", "-M", "main")
    git(root, "branch", "feature")
    (root / "second.txt").write_text("second\n")
    git(root, "add", "second.txt")
    git(root, "commit", "-q", "-m", "second")
    return root


async def test_hostile_tests_leave_the_users_git_state_alone(hostile_repo: Path) -> None:
    root = hostile_repo
    before = _git_state(root)
    shadow = Shadow.create(root, session_id="hostile")
    try:
        report = await LocalSandbox().run_tests(shadow.path, "python -m pytest -q", timeout=60)
        assert report.passed >= 1, report.output_tail
        assert _git_state(root) == before
        # Accept still commits the step into the user's repo, on top of the user's last commit.
        (shadow.path / "calc.py").write_text("def add(a, b):\n    return b + a\n")
        sha = accept(shadow, title="Swap operands")
    finally:
        shadow.remove()
    assert git(root, "rev-parse", "HEAD~1") == before["head"]
    assert git(root, "rev-parse", "HEAD") == sha
    assert "b + a" in (root / "calc.py").read_text()
    assert not (root / "planted.txt").exists()
    assert "feature" in git(root, "branch")
    assert "Mallory" not in (root / ".git" / "config").read_text()
