"""What the model is shown of the repository."""

from __future__ import annotations

from tui_engineer.context import list_repo_files
from tui_engineer.context.files import mentioned_paths


def test_listing_honours_gitignore_and_the_limit(make_repo) -> None:
    repo = make_repo({".gitignore": "build/\n", "a.py": "", "b.py": "", "build/out.py": ""})
    (repo / "c.py").write_text("")  # untracked, not ignored: listed
    (repo / "b.py").unlink()  # deleted from the tree: not listed
    assert list_repo_files(repo) == [".gitignore", "a.py", "c.py"]
    assert list_repo_files(repo, limit=2) == [".gitignore", "a.py"]


def test_mentioned_paths_keep_dot_folders() -> None:
    known = [".github/workflows/ci.yml", "src/app.py"]
    text = "fix ./.github/workflows/ci.yml and src/app.py, not other.py"
    assert mentioned_paths(text, known) == [".github/workflows/ci.yml", "src/app.py"]


def test_a_staged_rename_is_one_change_and_marks_no_other_file_changed(make_repo) -> None:
    # `git status --porcelain -z` gives a rename as "R  new\0old\0": the old name has no
    # status columns. Cut like the others, "ab/x.py" read as "x.py", another file of the repo,
    # which then ranked as changed recently.
    from tests.conftest import git
    from tui_engineer.context import gather_context
    from tui_engineer.context.ranking import recent_changes

    repo = make_repo({"ab/x.py": "A = 1\n", "x.py": "B = 2\n", "y.py": "C = 3\n"})
    git(repo, "mv", "ab/x.py", "ab/y.py")
    assert sorted(recent_changes(repo)[0]) == ["ab/x.py", "ab/y.py"]
    recent = {r.path: r.recent for r in gather_context(repo, "tidy up").ranked}
    assert recent["ab/y.py"] > recent.get("y.py", 0)  # changed now, not only in the first commit
    assert recent.get("x.py", 0) == recent.get("y.py", 0)  # like y.py, only in the first commit


def test_a_shadows_recent_commits_are_asked_of_git_once_per_head(make_repo, tmp_path, monkeypatch):
    """Every prompt ranks files by the last commits; a shadow's HEAD stays put between
    accepts, so its log is asked once (0.2 s at 200,000 files when a commit touched them all)
    and again once HEAD moves."""
    import json

    from tests.conftest import git
    from tui_engineer.context.ranking import recent_changes
    from tui_engineer.vcs.shadow import Shadow

    repo = make_repo({"a.py": "A = 1\n", "b.py": "B = 2\n"})
    (repo / "b.py").write_text("B = 3\n")
    git(repo, "commit", "-qam", "b")
    shadow = Shadow.create(repo, session_id="recent")
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))

    def logs() -> int:
        lines = trace.read_text().splitlines() if trace.exists() else []
        events = [json.loads(line) for line in lines]
        return sum(e.get("event") == "start" and "log" in e["argv"] for e in events)

    try:
        assert recent_changes(shadow.path)[1:] == [["b.py"]]
        assert recent_changes(shadow.path)[1:] == [["b.py"]]
        assert logs() == 1
        (shadow.path / "a.py").write_text("A = 2\n")
        git(shadow.path, "commit", "-qam", "a")  # HEAD moves, as an accept moves it
        assert recent_changes(shadow.path)[1:3] == [["a.py"], ["b.py"]]
        assert logs() == 2
    finally:
        shadow.remove()


def test_a_project_put_under_git_in_one_commit_has_no_file_recent_for_being_in_it(make_repo):
    """A first commit lists every file there was: nothing in it is recent for that, and at
    200,000 files asking git for it took 0.13 s of the way to the first model call."""
    from tests.conftest import git
    from tui_engineer.context import gather_context
    from tui_engineer.context.ranking import recent_changes

    repo = make_repo({"a.py": "A = 1\n", "b.py": "B = 2\n", "c.py": "C = 3\n"})
    assert recent_changes(repo) == [[]]
    (repo / "b.py").write_text("B = 3\n")
    git(repo, "commit", "-qam", "b")
    assert recent_changes(repo) == [[], ["b.py"]]
    recent = {r.path: r.recent for r in gather_context(repo, "tidy up").ranked}
    assert recent["b.py"] > 0
    assert "a.py" not in recent and "c.py" not in recent  # nothing else points at them
