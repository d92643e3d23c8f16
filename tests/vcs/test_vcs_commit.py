"""Accepting a step into the user's branch and undoing it (real git repos, real hooks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git, start_conflicting_merge, write_hook
from tui_engineer.vcs import tree_edit
from tui_engineer.vcs.commit import accept, undo_last
from tui_engineer.vcs.repo import GitRefused, repo_state
from tui_engineer.vcs.shadow import Shadow

MINUS = "def add(a, b):\n    return a - b\n"


@pytest.fixture
def shadow(make_repo):
    made = Shadow.create(make_repo(), session_id="s1")
    yield made
    made.remove()


def propose(shadow: Shadow) -> None:
    (shadow.path / "calc.py").write_text(MINUS)
    (shadow.path / "util.py").write_text("X = 1\n")


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD"))


def test_accept_makes_one_commit_with_message_and_trailer(shadow):
    root = shadow.root
    propose(shadow)
    sha = accept(shadow, title="Subtract", body="Because.", model="gpt-test")
    assert sha == git(root, "rev-parse", "HEAD") and commit_count(root) == 2
    assert git(root, "log", "-1", "--format=%B") == (
        "Subtract\n\nBecause.\n\nAssisted-by: tui-engineer (model: gpt-test)"
    )
    assert git(root, "log", "-1", "--format=%an <%ae>") == "Test Author <author@example.invalid>"
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["calc.py", "util.py"]
    assert (root / "calc.py").read_text() == MINUS and (root / "util.py").exists()
    assert git(root, "status", "--porcelain") == ""
    assert git(root, "branch", "--show-current") == "main"


def test_after_accept_the_next_step_builds_on_the_commit(shadow):
    propose(shadow)
    first = accept(shadow, title="one")
    assert shadow.diff() == "" and shadow.baseline == first
    (shadow.path / "util.py").write_text("X = 2\n")
    assert shadow.changed_files() == [("M", "util.py")]
    accept(shadow, title="two")
    assert git(shadow.root, "rev-parse", "HEAD~1") == first
    assert (shadow.root / "util.py").read_text() == "X = 2\n"


def _hard_resets(trace: Path) -> int:
    starts = (json.loads(line) for line in trace.read_text().splitlines())
    return sum(e["event"] == "start" and "--hard" in e["argv"] for e in starts)


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "part"])
def test_after_accept_the_shadow_is_at_the_commit_and_moved_by_head_alone_when_whole(
    shadow, tmp_path, monkeypatch, whole
):
    """Accepting the whole proposal leaves the shadow's files as the commit has them: only its
    HEAD moves (no reset reading every file). Accepting a part, what was left out goes."""
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    propose(shadow)
    changes = shadow.changes()
    sha = accept(shadow, title="both" if whole else "one", changes=changes[: 2 if whole else 1])
    assert git(shadow.path, "rev-parse", "HEAD") == sha == shadow.baseline
    assert git(shadow.path, "status", "--porcelain") == "" and shadow.changes() == []
    assert (shadow.path / "util.py").exists() == whole
    assert _hard_resets(trace) == (0 if whole else 1)


@pytest.mark.parametrize("why", ["", "hook", "wide"], ids=["no-hooks", "hook", "wide"])
def test_a_temporary_index_is_made_only_for_hooks_given_one_or_a_wide_folder(
    shadow, tmp_path, monkeypatch, why
):
    """With no hook given the index, the commit's tree is made without reading HEAD's whole
    tree into one (no read-tree), unless a folder on the way is too wide to write again by
    itself (here: any); the commit is the same step either way."""
    if why == "hook":
        write_hook(shadow.root, "pre-commit", "git diff --cached --name-only > staged.txt\n")
    if why == "wide":
        monkeypatch.setattr(tree_edit, "WIDE_FOLDER", 10)
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    propose(shadow)
    sha = accept(shadow, title="both")
    starts = [json.loads(line) for line in trace.read_text().splitlines()]
    read_trees = [e for e in starts if e["event"] == "start" and "read-tree" in e["argv"]]
    assert bool(read_trees) == bool(why)
    committed = git(shadow.root, "show", "--name-only", "--format=", sha).split()
    assert committed == ["calc.py", "util.py"]
    if why == "hook":
        assert (shadow.root / "staged.txt").read_text().split() == committed


def test_accept_brings_deletes_and_renames(shadow):
    (shadow.path / "tests" / "test_calc.py").rename(shadow.path / "test_calc.py")
    (shadow.path / "calc.py").unlink()
    accept(shadow, title="move things")
    assert not (shadow.root / "calc.py").exists() and not (shadow.root / "tests").exists()
    assert (shadow.root / "test_calc.py").exists()
    assert git(shadow.root, "status", "--porcelain") == ""
    assert git(shadow.root, "ls-files").split() == ["test_calc.py"]


def test_a_user_edit_to_a_step_file_refuses_and_keeps_everything(shadow):
    root = shadow.root
    propose(shadow)
    (root / "calc.py").write_text("# my own edit\n")
    with pytest.raises(GitRefused, match="calc.py") as caught:
        accept(shadow, title="Subtract")
    assert "Nothing was written" in str(caught.value)
    assert (root / "calc.py").read_text() == "# my own edit\n"
    assert not (root / "util.py").exists() and commit_count(root) == 1
    assert shadow.changed_files()  # the proposal is still there


def test_include_dirty_leaves_other_user_changes_uncommitted(make_repo):
    root = make_repo({"calc.py": "v1\n", "notes.md": "n1\n"})
    (root / "notes.md").write_text("n1 plus my wip\n")
    (root / "scratch.txt").write_text("mine\n")
    shadow = Shadow.create(root, session_id="inc", include_dirty=True)
    try:
        (shadow.path / "calc.py").write_text("v2\n")
        accept(shadow, title="v2")
        assert git(root, "show", "--name-only", "--format=", "HEAD").split() == ["calc.py"]
        state = repo_state(root)
        assert (state.modified, state.untracked) == (["notes.md"], ["scratch.txt"])
        assert (root / "notes.md").read_text() == "n1 plus my wip\n"
        assert shadow.diff() == "" and (shadow.path / "scratch.txt").exists()
    finally:
        shadow.remove()


def test_the_steps_files_are_current_in_the_index_and_the_users_edits_stay_unstaged(make_repo):
    """`git diff-files` does not refresh the index: it lists a file whose stat data the
    index does not hold, as scripts and shell prompts see it. The step's files are not listed
    after the accept; a file the user edited still is, and stays unstaged."""
    root = make_repo({"calc.py": "v1\n", "notes.md": "n1\n"})
    (root / "notes.md").write_text("n1 plus my wip\n")
    shadow = Shadow.create(root, session_id="stat")
    try:
        (shadow.path / "calc.py").write_text("v2\n")
        (shadow.path / "new.py").write_text("N = 1\n")
        accept(shadow, title="v2")
        assert git(root, "diff-files", "--name-only").split() == ["notes.md"]
        assert git(root, "diff", "--cached", "--name-only") == ""
    finally:
        shadow.remove()


def failing_hook(root: Path) -> None:
    write_hook(root, "pre-commit", "echo 'flake: util.py is not allowed' >&2\nexit 1\n")


def test_a_failing_pre_commit_hook_leaves_the_tree_as_before(shadow):
    root = shadow.root
    (root / "scratch.txt").write_text("mine\n")
    git(root, "add", "scratch.txt")  # the user's own staged work must stay staged
    failing_hook(root)
    propose(shadow)
    with pytest.raises(GitRefused, match="flake: util.py is not allowed"):
        accept(shadow, title="Subtract")
    assert git(root, "status", "--porcelain") == "A  scratch.txt"
    assert "a + b" in (root / "calc.py").read_text() and not (root / "util.py").exists()
    assert commit_count(root) == 1


def test_a_failing_commit_msg_hook_is_named_and_nothing_is_written(shadow):
    root = shadow.root
    write_hook(root, "commit-msg", "echo 'the subject needs a ticket id' >&2\nexit 1\n")
    propose(shadow)
    with pytest.raises(GitRefused, match=r"Your commit-msg hook refused the commit \(exit 1\)"):
        accept(shadow, title="Subtract")
    assert git(root, "status", "--porcelain") == "" and commit_count(root) == 1
    assert not (root / ".git" / "tui-engineer-accept.json").exists()  # no decision left over


def test_signing_without_gpg_is_refused_with_what_to_do(shadow):
    root = shadow.root
    git(root, "config", "commit.gpgsign", "true")
    git(root, "config", "gpg.program", str(root.parent / "no-such-gpg"))
    propose(shadow)
    with pytest.raises(GitRefused, match="git config commit.gpgSign false"):
        accept(shadow, title="Subtract")
    assert git(root, "status", "--porcelain") == "" and commit_count(root) == 1


def test_a_failing_post_commit_hook_does_not_undo_or_hide_the_commit(shadow):
    # git ignores post-commit's exit status: the commit is made and stays made.
    root = shadow.root
    write_hook(root, "post-commit", "exit 1\n")
    propose(shadow)
    sha = accept(shadow, title="Subtract")
    assert git(root, "rev-parse", "HEAD") == sha and git(root, "status", "--porcelain") == ""


def test_no_git_identity_is_a_clear_refusal(shadow, monkeypatch, tmp_path):
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{name}_NAME")
        monkeypatch.delenv(f"GIT_{name}_EMAIL")
    monkeypatch.delenv("EMAIL", raising=False)
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    propose(shadow)
    with pytest.raises(GitRefused, match='git config --global user.email "you@example.com"'):
        accept(shadow, title="Subtract")
    assert git(shadow.root, "status", "--porcelain") == "" and commit_count(shadow.root) == 1
    assert empty.read_text() == ""


def test_accept_in_an_empty_repo_makes_the_first_commit(make_repo):
    root = make_repo({}, commit=False)
    shadow = Shadow.create(root, session_id="e")
    try:
        (shadow.path / "main.py").write_text("print('hi')\n")
        sha = accept(shadow, title="Hello")
        assert git(root, "rev-list", "HEAD") == sha
        assert git(root, "branch", "--show-current") == "main"
        assert git(root, "status", "--porcelain") == ""
    finally:
        shadow.remove()


def test_detached_head_commits_there_and_leaves_branches_alone(make_repo):
    root = make_repo()
    main = git(root, "rev-parse", "main")
    git(root, "checkout", "-q", "--detach")
    shadow = Shadow.create(root, session_id="d")
    try:
        propose(shadow)
        sha = accept(shadow, title="Subtract")
        assert git(root, "rev-parse", "HEAD") == sha and git(root, "rev-parse", "main") == main
        assert repo_state(root).branch is None
    finally:
        shadow.remove()


def test_accept_is_refused_during_a_merge(shadow):
    root = shadow.root
    start_conflicting_merge(root, "calc.py")
    (shadow.path / "util.py").write_text("X = 1\n")
    with pytest.raises(GitRefused, match="merge is in progress"):
        accept(shadow, title="x")
    assert not (root / "util.py").exists()


def test_undo_takes_back_the_last_step(shadow):
    root = shadow.root
    propose(shadow)
    sha = accept(shadow, title="Subtract")
    said = undo_last(root)
    assert "Subtract" in said and sha[:8] in said
    assert commit_count(root) == 1
    assert "a + b" in (root / "calc.py").read_text() and not (root / "util.py").exists()
    assert git(root, "status", "--porcelain") == ""


def test_undo_gives_back_wip_that_was_committed_with_the_step(make_repo):
    root = make_repo({"calc.py": "v1\n"})
    (root / "calc.py").write_text("v1\nmy wip\n")
    shadow = Shadow.create(root, session_id="w", include_dirty=True)
    try:
        (shadow.path / "calc.py").write_text("v1\nmy wip\nstep\n")
        accept(shadow, title="step")
        undo_last(root)
        assert (root / "calc.py").read_text() == "v1\nmy wip\n"
        assert repo_state(root).modified == ["calc.py"] and commit_count(root) == 1
    finally:
        shadow.remove()


def test_undo_in_a_repo_whose_only_commit_is_the_step(make_repo):
    root = make_repo({}, commit=False)
    shadow = Shadow.create(root, session_id="e")
    try:
        (shadow.path / "main.py").write_text("print('hi')\n")
        accept(shadow, title="Hello")
        assert "without commits again" in undo_last(root)
        assert repo_state(root).head is None and not (root / "main.py").exists()
    finally:
        shadow.remove()


def test_undo_refuses_when_the_step_was_pushed(shadow, tmp_path):
    root = shadow.root
    git(tmp_path, "init", "-q", "--bare", "remote.git")
    git(root, "remote", "add", "origin", str(tmp_path / "remote.git"))
    propose(shadow)
    sha = accept(shadow, title="Subtract")
    git(root, "push", "-q", "origin", "main")
    with pytest.raises(GitRefused, match=f"pushed.*origin/main.*git revert {sha[:8]}"):
        undo_last(root)
    assert git(root, "rev-parse", "HEAD") == sha


def test_undo_refuses_when_the_user_changed_the_files_since(shadow):
    root = shadow.root
    propose(shadow)
    sha = accept(shadow, title="Subtract")
    (root / "util.py").write_text("X = 'mine now'\n")
    with pytest.raises(GitRefused, match="util.py"):
        undo_last(root)
    assert git(root, "rev-parse", "HEAD") == sha
    assert (root / "util.py").read_text() == "X = 'mine now'\n"


def test_undo_refuses_a_commit_tui_engineer_did_not_make(shadow):
    root = shadow.root
    propose(shadow)
    ours = accept(shadow, title="Subtract")
    (root / "other.txt").write_text("mine\n")
    git(root, "add", "other.txt")
    git(root, "commit", "-q", "-m", "my own commit")
    with pytest.raises(GitRefused, match=f"not made by tui-engineer.*git revert {ours[:8]}"):
        undo_last(root)
    assert commit_count(root) == 3
