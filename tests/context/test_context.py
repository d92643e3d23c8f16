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
