"""A step's tree built folder by folder (vcs/tree_edit.py) is the very tree the temporary index
builds (read-tree, update-index, write-tree: vcs/commit_objects.py), for every kind of change.
Real git repositories; both trees come from git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git, write_hook
from tui_engineer.vcs import tree_edit
from tui_engineer.vcs.commit_objects import Entry, stage
from tui_engineer.vcs.plumbing import git_text
from tui_engineer.vcs.tree_edit import TooWide, hooks_see_an_index, tree_with

FILES = {
    "README.md": "hello\n",
    "run.sh": "echo\n",
    "f": "a file that becomes a folder\n",
    "d/only.txt": "the only file of d\n",
    "pkg/__init__.py": "",
    "pkg/core.py": "def add(a, b):\n    return a - b\n",
    "pkg/sub/deep/x.py": "X = 1\n",
}


def _blob(root: Path, text: str) -> str:
    done = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=root, input=text.encode(),
        capture_output=True, check=True,
    )  # fmt: skip
    return done.stdout.decode().strip()


def _by_index(root: Path, tmp: Path, head: str | None, entries: list[Entry]) -> str:
    index = tmp / "index"
    index.unlink(missing_ok=True)
    stage(root, index, head, entries)
    return git_text(root, "write-tree", env={"GIT_INDEX_FILE": str(index)})


CASES = {
    "one file changed": lambda b: [Entry("pkg/core.py", "100644", b("return a + b\n"))],
    "new folders": lambda b: [Entry("pkg/new/deeper/n.py", "100644", b("N = 1\n"))],
    "a folder's last file removed": lambda b: [Entry("d/only.txt")],
    "a top file removed": lambda b: [Entry("README.md")],
    "made executable": lambda b: [Entry("run.sh", "100755", b("echo\n"))],
    "a symlink": lambda b: [Entry("pkg/link", "120000", b("core.py"))],
    "a file becomes a folder": lambda b: [Entry("f"), Entry("f/inside.txt", "100644", b("i\n"))],
    "a folder becomes a file": lambda b: [Entry("d/only.txt"), Entry("d", "100644", b("d\n"))],
    "a rename across folders": lambda b: [
        Entry("pkg/sub/deep/x.py"),
        Entry("top_x.py", "100644", b("X = 1\n")),
    ],
    "everything removed": lambda b: [Entry(path) for path in FILES],
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_tree_is_the_one_a_temporary_index_builds(make_repo, tmp_path, case):
    root = make_repo(FILES)
    head = git(root, "rev-parse", "HEAD")
    entries = CASES[case](lambda text: _blob(root, text))
    assert tree_with(root, head, entries) == _by_index(root, tmp_path, head, entries)


def test_a_first_commit_builds_from_nothing(tmp_path):
    root = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    entries = [
        Entry("a/b.py", "100644", _blob(root, "B = 1\n")),
        Entry("c", "100644", _blob(root, "c\n")),
    ]
    assert tree_with(root, None, entries) == _by_index(root, tmp_path, None, entries)


@pytest.mark.parametrize("hook", ["pre-commit", "prepare-commit-msg", "commit-msg"])
def test_a_hook_that_is_given_the_index_is_found(make_repo, hook):
    root = make_repo(FILES)
    assert not hooks_see_an_index(root)
    write_hook(root, "post-commit", "exit 0\n")  # given no index: no reason for one
    assert not hooks_see_an_index(root)
    write_hook(root, hook, "exit 0\n")
    assert hooks_see_an_index(root)


def test_hooks_in_core_hooks_path_and_in_config_are_found(make_repo, tmp_path):
    root = make_repo(FILES)
    folder = tmp_path / "hooks"
    folder.mkdir()
    (folder / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(folder / "pre-commit", 0o755)
    git(root, "config", "core.hooksPath", str(folder))
    assert hooks_see_an_index(root)
    git(root, "config", "--unset", "core.hooksPath")
    assert not hooks_see_an_index(root)
    git(root, "config", "hook.lint.command", "true")  # newer git's hooks set in config
    assert hooks_see_an_index(root)


def test_a_folder_too_wide_to_write_again_is_said(make_repo, monkeypatch):
    root = make_repo(FILES)
    monkeypatch.setattr(tree_edit, "WIDE_FOLDER", 100)  # the top folder's tree is wider
    with pytest.raises(TooWide):
        tree_with(root, "HEAD", [Entry("README.md")])
