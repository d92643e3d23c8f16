"""A nox session and a CI workflow step are declarations too (issue 33, part 3): the test
command they run is taken, with the reason shown, before guesses from the files; a noxfile is
read, never run. Real files in real git repos."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.config.detect import detect_test_command

NOXFILE = """import nox


@nox.session
def lint(session):
    session.run("flake8", "src")


@nox.session(python=["3.11", "3.12"], name="tests")
def run_tests(session):
    session.install("-e", ".")
    session.run("coverage", "run", "-m", "pytest", "--cov=calc", *session.posargs)
"""

WORKFLOW = """name: CI
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e .
      - name: Lint
        run: ruff check .
      - name: Test
        run: |
          python -m unittest discover -s tests -v
          echo done
        env:
          CI: "1"
"""


def test_a_nox_test_session_is_the_command(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"noxfile.py": NOXFILE, "tests/test_calc.py": "", "pytest.ini": ""})
    assert detect_test_command(repo) == (
        "python -m pytest",
        "the tests session in noxfile.py",
    )


@pytest.mark.parametrize(
    "noxfile",
    [
        "import nox\n\n@nox.session\ndef docs(session):\n    session.run('pytest', '--doctest')\n",
        "import nox\n\n@nox.session\ndef tests(session):\n    session.run(*ARGS)\n",  # built
        "import nox\n\n@nox.session\ndef tests(session):\n    session.install('x')\n",
        "this is not python (",
    ],
)
def test_a_noxfile_without_a_readable_test_session_leaves_it_to_the_files(
    make_repo: Callable[..., Path], noxfile: str
) -> None:
    repo = make_repo({"noxfile.py": noxfile, "Cargo.toml": "[package]\nname = 'x'\n"})
    assert detect_test_command(repo) == ("cargo test", "Cargo.toml")


def test_a_workflow_step_that_runs_the_tests_is_the_command(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({".github/workflows/ci.yml": WORKFLOW, "package.json": '{"scripts": '
                      '{"test": "jest"}}', "tests/test_calc.py": ""})  # fmt: skip
    assert detect_test_command(repo) == (
        "python -m unittest discover -s tests -v",
        "a step of .github/workflows/ci.yml",
    )


@pytest.mark.parametrize(
    "run",
    [
        "run: make test",  # the Makefile's own source decides what that runs
        "run: tox -e py312",
        "run: pytest -k ${{ matrix.k }}",  # an expression only CI can fill in
        "run: echo testing",
    ],
)
def test_workflow_steps_that_are_not_one_plain_test_command_are_left(
    make_repo: Callable[..., Path], run: str
) -> None:
    workflow = f"jobs:\n  t:\n    steps:\n      - {run}\n"
    repo = make_repo({".github/workflows/ci.yaml": workflow, "go.mod": "module x\n"})
    assert detect_test_command(repo) == ("go test ./...", "go.mod")


# Noxfiles written as projects write them (issue 48, part 1): a module constant, a parameter of
# the session, the posargs' default. The first is in the style of structlog's and attrs's test
# sessions (a parametrized suite), the others of pip-tools' and httpx's `session.posargs or …`.
PARAMETRIZED = """import nox

PYTHONS = ["3.10", "3.11", "3.12"]
STRICT = "--strict-markers"


@nox.session(python=PYTHONS)
@nox.parametrize("suite", ["unit", "integration"])
def tests(session, suite):
    session.install("-e", ".[tests]")
    session.run("pytest", STRICT, f"tests/{suite}", *session.posargs)
"""
POSARGS_OR_DEFAULT = """import nox


@nox.session
def tests(session):
    args = session.posargs or ["-n", "auto", "tests"]
    session.run("pytest", *args)
"""
STARRED_DEFAULT = """import nox


@nox.session
@nox.parametrize("django", ["4.2", "5.1"])
def tests(session, django):
    session.install(f"django~={django}")
    session.run("python", "-m", "pytest", *(session.posargs or ("tests",)))
"""


@pytest.mark.parametrize(
    ("noxfile", "found"),
    [
        (PARAMETRIZED, ("pytest --strict-markers tests/unit",
                        "the tests(suite='unit') session in noxfile.py")),
        (POSARGS_OR_DEFAULT, ("pytest -n auto tests", "the tests session in noxfile.py")),
        (STARRED_DEFAULT, ("python -m pytest tests", "the tests session in noxfile.py")),
    ],
)  # fmt: skip
def test_nox_sessions_with_parameters_constants_and_posargs_defaults(
    make_repo: Callable[..., Path], noxfile: str, found: tuple[str, str]
) -> None:
    repo = make_repo({"noxfile.py": noxfile, "tests/unit/test_x.py": ""})
    assert detect_test_command(repo) == found
