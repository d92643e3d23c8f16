"""The shipped `repo-tasks` suite: each task is sound (its hidden tests fail on the starting
repo and pass on its solution), and a bench over all of them with the oracle server scores
exactly as scripted, including a fix and a "still wrong" follow-up."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest

from tests.oracle_server import OracleServer
from tui_engineer.bench.hidden import run_hidden
from tui_engineer.bench.runner import make_repo
from tui_engineer.bench.tasks import load_suite
from tui_engineer.cli.main import main
from tui_engineer.config.settings import Settings

TASKS = load_suite("repo-tasks")
BROKEN = {"first-try-off-by-one", "slugify-follow-up"}


def test_suite_has_the_kinds_of_task_the_issue_asks_for():
    names = {t.name for t in TASKS}
    assert len(TASKS) >= 12
    assert {"cli-json-flag", "fix-from-traceback", "rename-across-files", "add-dependency",
            "first-try-off-by-one"} <= names  # fmt: skip
    assert all(t.solution and t.hidden and t.test_command for t in TASKS)


def hidden_passes(folder: Path, files: dict[str, str], task) -> bool:
    make_repo(folder, files)
    settings = Settings(test_timeout=60)
    return asyncio.run(run_hidden(folder, task.hidden, task.hidden_command, settings)).passed


@pytest.mark.slow  # each task's real project, its suite run twice: 5-15 s a task
@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.name)
def test_hidden_tests_fail_at_the_start_and_pass_on_the_solution(task, tmp_path):
    assert not hidden_passes(tmp_path / "start", task.files, task)
    assert hidden_passes(tmp_path / "solved", {**task.files, **task.solution}, task)
    if task.first_try:
        assert not hidden_passes(tmp_path / "first", {**task.files, **task.first_try}, task)


@pytest.mark.slow  # a whole bench: every repo task worked through: 82 s at -n 4, load 13
def test_oracle_bench_of_the_whole_suite_scores_as_scripted(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-repo-tasks-0123456789")
    out = tmp_path / "b"
    with OracleServer(TASKS, broken=BROKEN) as oracle:
        args = ["bench", "repo-tasks", "--model", "test-model", "--base-url", oracle.base_url,
                "--workers", "2", "--no-progress", "--out", str(out)]  # fmt: skip
        assert main(args) == 0, capsys.readouterr().err
        oracle.check()
    rows = {r["task"]: r for r in csv.DictReader((out / "results.csv").open())}
    assert {name: r["worked"] for name, r in rows.items()} == {t.name: "True" for t in TASKS}
    assert rows["first-try-off-by-one"]["fix_attempts"] == "1"
    assert rows["first-try-off-by-one"]["perfect"] == "True"
    # The first slug passes its own test, the hidden ones do not: one follow-up, not perfect.
    assert rows["slugify-follow-up"]["follow_ups"] == "1"
    assert rows["slugify-follow-up"]["perfect"] == "False"
    assert rows["slugify-follow-up"]["steps"] == "2"
