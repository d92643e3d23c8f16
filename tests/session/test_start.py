"""One start-up for every front end (session/start.py): each problem reaches the front end as a
typed Problem, the fix the user picks is applied there, and the checks run again."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import git, write_files
from tui_engineer.base.errors import UserError
from tui_engineer.llm.errors import MissingApiKey
from tui_engineer.session.options import RunOptions
from tui_engineer.session.start import Problem, start

CALC = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def test_a_folder_with_no_repository_goes_through_each_problem_to_the_model_key(
    tmp_path: Path,
) -> None:
    """A new user's folder: not a repository (init), then uncommitted files (build on them),
    then no API key, which the user cannot fix here: that one is raised as it is."""
    folder = tmp_path / "project"
    write_files(folder, CALC)
    seen: list[Problem] = []
    choices = {"not_a_repo": "init", "dirty": "include"}
    said: list[str] = []

    async def answer(problem: Problem) -> str | None:
        seen.append(problem)
        return choices.get(problem.kind)

    async def say(sentence: str) -> None:
        said.append(sentence)

    options = RunOptions(request="add sub", repo=folder, flags={"model": "gpt-4o-mini"})
    with pytest.raises(MissingApiKey):
        asyncio.run(start(options, answer, said=say))
    assert [p.kind for p in seen] == ["not_a_repo", "dirty", "other"]
    assert (folder / ".git").is_dir()
    assert said[0] == f"Created a git repository in {folder.resolve()}"
    assert seen[1].files == ["calc.py", "tests/test_calc.py"]
    assert options.allow_dirty  # "include": the session builds on the uncommitted files
    assert seen[2].title == "No API key"
    assert seen[2].url == "https://api.openai.com/v1"  # the server the key is for


def test_without_an_answer_the_first_problem_is_raised(tmp_path: Path) -> None:
    """Headless and editors have no one to ask at start-up: the problem's own message goes out."""
    folder = tmp_path / "plain"
    folder.mkdir()
    with pytest.raises(UserError, match="is not inside a git repository"):
        asyncio.run(start(RunOptions(request="x", repo=folder, flags={})))


def test_no_tests_then_going_on_unverified(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_files(repo, {"notes.txt": "no tests here\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "start")
    kinds: list[str] = []

    async def answer(problem: Problem) -> str | None:
        kinds.append(problem.kind)
        return "unverified" if problem.kind == "no_tests" else None

    options = RunOptions(request="x", repo=repo, flags={"model": "m"})
    with pytest.raises(MissingApiKey):
        asyncio.run(start(options, answer))
    assert kinds == ["no_tests", "other"]
    assert options.no_tests == "unverified"
