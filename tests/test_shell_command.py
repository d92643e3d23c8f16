"""The one reading of a shell command (tui_engineer/base/shell_command.py): operators are tokens
whether or not spaces surround them, so a compound command is never taken for a simple one."""

from __future__ import annotations

import pytest

from tui_engineer.base.shell_command import commands, last_command, program, python_module, words


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -k 'not slow' tests/", ["pytest", "-k", "not slow", "tests/"]),
        ("CI=1 X=$HOME/a python -m pytest", ["python", "-m", "pytest"]),
        ("go test ./... -run=Test#1", ["go", "test", "./...", "-run=Test#1"]),
        ("cd tests && python runtests.py", []),
        ("cd tests&&python runtests.py", []),  # no spaces: still two commands
        ("pytest>log", []),
        ("pytest 2>&1 | tee log", []),
        ("(cd tests; pytest)", []),
        ("pytest 'open", []),
    ],
)
def test_words_of_a_simple_command_only(command: str, expected: list[str]) -> None:
    assert words(command) == expected


def test_commands_program_and_last_command() -> None:
    assert commands("cd tests && CI=1 pytest -q | tee log") == [
        ["cd", "tests"],
        ["CI=1", "pytest", "-q"],
        ["tee", "log"],
    ]
    assert program("CI=1 ./run-tests.sh --fast") == "./run-tests.sh"
    assert program("(cd tests; pytest)") is None
    assert last_command("cd tests && python runtests.py") == "python runtests.py"
    assert python_module(words(".venv/bin/python3 -m unittest -v")) == "unittest"
    assert python_module(words("python tests/runtests.py")) is None
