"""The user's repository: finding it, its state, and saving uncommitted work (real git repos)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git, start_conflicting_merge, write_hook
from tui_engineer.vcs.dirty import DirtyTree, handle_dirty
from tui_engineer.vcs.identity import commit_config, config_bool
from tui_engineer.vcs.repo import (
    GitRefused,
    NotARepo,
    find_repo_root,
    init_repo,
    open_repo,
    repo_state,
    uncommitted,
)


def failing_hook(root: Path, name: str = "pre-commit") -> None:
    write_hook(root, name, "echo 'lint says no: calc.py is ugly' >&2\nexit 1\n")


def test_finds_the_root_from_a_subfolder(make_repo):
    root = make_repo()
    assert find_repo_root(root / "tests") == root.resolve()


def test_outside_a_repo_is_a_clear_error_with_exit_code_2(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(NotARepo) as caught:
        find_repo_root(folder)
    assert caught.value.exit_code == 2
    assert str(caught.value) == (
        f"{folder.resolve()} is not inside a git repository. Run 'git init' there, "
        "or 'tui-engineer --init' to create one."
    )


def test_init_creates_an_empty_repo(tmp_path):
    root = init_repo(tmp_path / "new")
    assert find_repo_root(root) == root
    state = repo_state(root)
    assert state.head is None and not state.dirty


def test_state_of_a_clean_repo(make_repo):
    root = make_repo()
    state = repo_state(root)
    assert state.branch == "main"
    assert state.head == git(root, "rev-parse", "HEAD")
    assert not state.dirty and state.in_progress is None


def test_state_of_an_empty_repo_and_a_detached_head(make_repo):
    empty = make_repo(name="empty", commit=False)
    state = repo_state(empty)
    assert (state.branch, state.head) == ("main", None)
    assert sorted(state.untracked) == ["calc.py", "tests/test_calc.py"]

    root = make_repo()
    git(root, "checkout", "-q", "--detach")
    state = repo_state(root)
    assert state.branch is None and state.head == git(root, "rev-parse", "HEAD")


def test_state_lists_staged_modified_untracked_but_not_ignored(make_repo):
    root = make_repo({"a.py": "a\n", "b.py": "b\n", ".gitignore": "*.log\n"})
    (root / "a.py").write_text("a2\n")
    git(root, "add", "a.py")
    (root / "b.py").write_text("b2\n")
    (root / "new.py").write_text("n\n")
    (root / "debug.log").write_text("ignored\n")
    state = repo_state(root)
    assert (state.staged, state.modified, state.untracked) == (["a.py"], ["b.py"], ["new.py"])
    assert state.dirty


def test_merge_in_progress_is_reported(make_repo):
    root = make_repo({"f.txt": "base\n"})
    start_conflicting_merge(root, "f.txt")
    assert repo_state(root).in_progress == "merge"
    with pytest.raises(GitRefused, match="merge is in progress"):
        handle_dirty(root, "wip")


def test_dirty_tree_message_lists_ten_files_and_the_options(tmp_path):
    files = [f"f{i}.py" for i in range(12)]
    err = DirtyTree.for_files(tmp_path, files)
    text = str(err)
    assert "f9.py" in text and "f10.py" not in text and "and 2 more" in text
    assert "--allow-dirty" in text and "stash" in text and err.exit_code == 2


def dirty(root: Path) -> None:
    (root / "calc.py").write_text("def add(a, b):\n    return a + b  # wip\n")
    (root / "notes.txt").write_text("untracked idea\n")


def test_wip_commits_everything_on_the_branch(make_repo):
    root = make_repo()
    dirty(root)
    said = handle_dirty(root, "wip")
    assert "git reset --soft HEAD~1" in said
    assert git(root, "log", "-1", "--format=%s") == "WIP: saved by tui-engineer before session"
    assert not repo_state(root).dirty
    assert "# wip" in (root / "calc.py").read_text()
    assert (root / "notes.txt").read_text() == "untracked idea\n"


def test_wip_with_a_failing_hook_changes_nothing(make_repo):
    root = make_repo()
    dirty(root)
    failing_hook(root)
    before = git(root, "status", "--porcelain")
    with pytest.raises(GitRefused, match="lint says no"):
        handle_dirty(root, "wip")
    assert git(root, "status", "--porcelain") == before
    assert git(root, "rev-list", "--count", "HEAD") == "1"


def test_stash_saves_everything_and_says_how_to_get_it_back(make_repo):
    root = make_repo()
    dirty(root)
    said = handle_dirty(root, "stash")
    assert "git stash pop" in said
    assert not repo_state(root).dirty and not (root / "notes.txt").exists()
    assert "tui-engineer: saved before session" in git(root, "stash", "list")
    git(root, "stash", "pop")
    assert (root / "notes.txt").read_text() == "untracked idea\n"
    assert "# wip" in (root / "calc.py").read_text()


def test_stash_in_an_empty_repo_is_refused_with_alternatives(make_repo):
    root = make_repo(commit=False)
    with pytest.raises(GitRefused, match="no commits yet"):
        handle_dirty(root, "stash")
    assert sorted(repo_state(root).untracked) == ["calc.py", "tests/test_calc.py"]


def test_include_leaves_the_tree_alone(make_repo):
    root = make_repo()
    dirty(root)
    before = git(root, "status", "--porcelain")
    assert "uncommitted" in handle_dirty(root, "include")
    assert git(root, "status", "--porcelain") == before


def test_wip_without_git_identity_is_refused(make_repo, monkeypatch):
    root = make_repo()
    dirty(root)
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{name}_NAME")
        monkeypatch.delenv(f"GIT_{name}_EMAIL")
    monkeypatch.delenv("EMAIL", raising=False)
    with pytest.raises(GitRefused, match="user.email"):
        handle_dirty(root, "wip")
    assert git(root, "rev-list", "--count", "HEAD") == "1"
    assert git(root, "config", "--list", "--local").find("user.") == -1


def test_uncommitted_names_the_users_edits_not_files_equal_to_head(make_repo):
    root = make_repo({"a.py": "a\n", "b.py": "b\n"})
    (root / "a.py").write_text("edited\n")
    (root / "new.py").write_text("new\n")
    # b.py is as committed (e.g. just written by an accepted step's commit): not an edit.
    assert uncommitted(root, ["a.py", "b.py", "new.py"]) == ["a.py", "new.py"]
    assert uncommitted(root, ["b.py"]) == []
    assert uncommitted(root, []) == []


def test_state_names_renames_spaces_conflicts_and_a_branch_called_detached(make_repo):
    """One `git status --porcelain=v2` gives what v1 plus symbolic-ref and rev-parse gave."""
    root = make_repo({"old name.py": "o\n", "m.py": "m\n", "f.txt": "base\n"})
    git(root, "mv", "old name.py", "new name.py")
    (root / "m.py").write_text("m2\n")
    git(root, "add", "m.py")
    (root / "m.py").write_text("m3\n")
    (root / "sub dir").mkdir()
    (root / "sub dir" / "x y.txt").write_text("u\n")
    state = repo_state(root)
    assert sorted(state.staged) == ["m.py", "new name.py"]
    assert state.modified == ["m.py"]
    assert state.untracked == ["sub dir/x y.txt"]

    conflicted = make_repo({"f.txt": "base\n"}, name="conflicted")
    start_conflicting_merge(conflicted, "f.txt")
    state = repo_state(conflicted)
    assert (state.staged, state.modified) == (["f.txt"], ["f.txt"])

    git(root, "commit", "-qam", "more")
    git(root, "checkout", "-q", "-b", "(detached)")
    state = repo_state(root)
    assert (state.branch, state.head) == ("(detached)", git(root, "rev-parse", "HEAD"))


def test_commit_config_reads_identity_and_signing_in_one_go(make_repo):
    root = make_repo()
    git(root, "config", "user.name", "Local Name")
    git(root, "config", "user.name", "Last Name", "--add")
    git(root, "config", "Author.Email", "a@example.invalid")
    with (root / ".git" / "config").open("a") as config:
        config.write("[commit]\n\tgpgSign\n")  # no value: git reads it as true
    with open_repo(root) as repo:
        found = commit_config(repo)
    assert found["user.name"] == "Last Name"  # the last value wins, as with git config --get
    assert found["author.email"] == "a@example.invalid"
    assert found["commit.gpgsign"] is None and config_bool(found["commit.gpgsign"])
    assert [config_bool(v) for v in ("yes", "On", "1", "0", "false", "", "nonsense")] == [
        True, True, True, False, False, False, False,
    ]  # fmt: skip
