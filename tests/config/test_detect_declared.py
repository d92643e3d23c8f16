"""The test command a project declares for its own tools wins over guesses from its files
(issue 33, part 3): tox.ini's commands, a pyproject script (hatch, pdm, poe), the one command
of a Makefile's test target; with the reason shown. Real files in real git repos."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.config.detect import detect_test_command

RUNTESTS_TOX = """[tox]
envlist = py3, flake8, docs

[testenv]
deps = -e .
commands =
    {envpython} tests/runtests.py {posargs}

[testenv:flake8]
commands = flake8 .
"""
PACKAGE_JSON = '{"scripts": {"test": "eslint . && grunt test"}}'


def test_a_tox_ini_running_its_own_script_wins_over_package_json(
    make_repo: Callable[..., Path],
) -> None:
    """Django's shape: tox runs tests/runtests.py; package.json is for its JavaScript."""
    repo = make_repo({"tox.ini": RUNTESTS_TOX, "package.json": PACKAGE_JSON,
                      "tests/runtests.py": "", "tests/test_x.py": ""})  # fmt: skip
    assert detect_test_command(repo) == (
        "python tests/runtests.py",
        "commands of [testenv] in tox.ini for the py3 environment",
    )


@pytest.mark.parametrize(
    ("tox", "command"),
    [
        # changedir: the command runs where tox would run it.
        ("[testenv]\nchangedir = tests\ncommands = {envpython} runtests.py {posargs}\n",
         "cd tests && python runtests.py"),
        # coverage and pytest-cov are tox's extras, not the tests.
        ("[testenv]\ncommands =\n    pip install -e .\n    coverage run -p -m pytest --cov=x "
         "--cov-report term {posargs:tests}\n    coverage report\n",
         "python -m pytest tests"),
        ("[testenv:py311]\ncommands = python -m unittest discover -s tests\n",
         "python -m unittest discover -s tests"),
    ],
)  # fmt: skip
def test_tox_commands_are_read_as_tox_runs_them(
    make_repo: Callable[..., Path], tox: str, command: str
) -> None:
    found = detect_test_command(make_repo({"tox.ini": tox}))
    assert found is not None and found[0] == command


def test_a_tox_ini_with_no_test_command_leaves_detection_to_the_files(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"tox.ini": "[testenv:lint]\ncommands = ruff check .\n",
                      "Cargo.toml": "[package]\n"})  # fmt: skip
    assert detect_test_command(repo) == ("cargo test", "Cargo.toml")


@pytest.mark.parametrize(
    ("pyproject", "found"),
    [
        ('[tool.hatch.envs.default.scripts]\ntest = "pytest -x {args:tests}"\n',
         ("pytest -x tests",
          "the test script in [tool.hatch.envs.default.scripts] of pyproject.toml")),
        ('[tool.pdm.scripts]\ntest = {cmd = ["python", "-m", "unittest", "-q"]}\n',
         ("python -m unittest -q", "the test script in [tool.pdm.scripts] of pyproject.toml")),
        ('[tool.poe.tasks.tests]\nshell = "python tests/run_all.py"\n',
         ("python tests/run_all.py", "the tests script in [tool.poe.tasks] of pyproject.toml")),
        # Not a test command: left to the files (none here).
        ('[tool.pdm.scripts]\ntest = "echo nothing to see"\n', None),
    ],
)  # fmt: skip
def test_pyproject_scripts(
    make_repo: Callable[..., Path], pyproject: str, found: tuple[str, str] | None
) -> None:
    assert detect_test_command(make_repo({"pyproject.toml": pyproject})) == found


def test_a_declared_python_command_runs_from_the_repositorys_own_venv(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    repo = make_repo(
        {"tox.ini": "[testenv]\ncommands = python -m unittest\n", ".gitignore": ".venv/\n"}
    )
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    assert detect_test_command(repo) == (
        ".venv/bin/python -m unittest",
        "commands of [testenv] in tox.ini; the repository's own .venv/",
    )


@pytest.mark.parametrize(
    "makefile",
    [
        "test:\n\tpip install -e .\n\tpytest\n",  # two commands: run the target whole
        "test: build\n\tpytest\n",  # a prerequisite builds first
        "test:\n\t$(UNKNOWN) -m pytest\n",  # a variable set elsewhere
    ],
)
def test_a_makefile_target_that_is_more_than_one_command_is_run_whole(
    make_repo: Callable[..., Path], makefile: str
) -> None:
    assert detect_test_command(make_repo({"Makefile": makefile})) == (
        "make test",
        "a test target in Makefile",
    )
