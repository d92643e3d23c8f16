"""tox.ini read as tox reads it (issue 48, part 1): the environment that runs the tests chosen
by its factors, its factor-conditional lines kept or dropped for it, generative names expanded,
substitutions made, `changedir` honoured; when the file cannot be read with confidence, the
guess from the files with the reason shown, never a broken command. The tox.ini files under
tests/data/tox/ are modelled on real projects' (each says which), in real git repositories."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tui_engineer.config.detect import detect_test_command

DATA = Path(__file__).parent.parent / "data" / "tox"
# The Python the tests run with, as a repository's venv says it (whatever runs this test).
PY312 = {".venv/pyvenv.cfg": "home = /usr/bin\nversion = 3.12.7\n"}


def _tox(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def _no_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", "")  # the command as written, not a venv's python


@pytest.mark.parametrize(
    ("data", "files", "command"),
    [
        # The regression: `tests: pytest {posargs:-n auto}` ran as `tests: pytest -n auto`.
        ("attrs-26.1.0.ini", {"tests/test_x.py": ""}, "pytest -n auto"),
        ("pluggy-1.5.0.ini", {"testing/test_x.py": ""}, "pytest"),
        ("pytest-8.3.ini", {"testing/test_x.py": ""}, "pytest"),
        ("requests-2.32.ini", {"tests/test_x.py": ""}, "pytest tests"),
        ("zope.event-6.2.ini", {"src/zope/event/tests.py": ""},
         "zope-testrunner --test-path=src -vc"),
        ("django-5.2.ini", {"tests/runtests.py": "", "package.json": '{"scripts": {"test": "x"}}'},
         "cd tests && python runtests.py"),
        ("everyday-factors.ini", {"tests/test_x.py": ""},
         "cd src && python -m pytest -p no:cacheprovider ../tests"),
    ],
)  # fmt: skip
def test_real_projects_tox_ini_gives_the_command_tox_runs_for_the_tests(
    make_repo: Callable[..., Path], data: str, files: dict[str, str], command: str
) -> None:
    found = detect_test_command(make_repo({"tox.ini": _tox(data), **files, **PY312}))
    assert found is not None
    assert found[0] == command
    assert "tox.ini" in found[1]


@pytest.mark.parametrize(
    ("version", "found"),
    [
        ("3.12.7", ("pytest -n auto", "commands of [testenv] in tox.ini for the py312-tests "
                    "environment")),
        # attrs runs 3.14's tests under coverage, in a generative section of its own.
        ("3.14.0", ("python -m pytest -n auto", "commands of [testenv:py3{9,10,14}-tests] in "
                    "tox.ini for the py314-tests environment")),
        # A Python no environment names: the envlist's first test environment.
        ("3.8.20", ("python -m pytest -n auto", "commands of [testenv:py3{9,10,14}-tests] in "
                    "tox.ini for the py39-tests environment")),
    ],
)  # fmt: skip
def test_the_environment_of_the_python_the_tests_run_with_is_chosen_and_named(
    make_repo: Callable[..., Path], version: str, found: tuple[str, str]
) -> None:
    venv = {".venv/pyvenv.cfg": f"home = /usr/bin\nversion = {version}\n"}
    repo = make_repo({"tox.ini": _tox("attrs-26.1.0.ini"), **venv})
    assert detect_test_command(repo) == found


@pytest.mark.parametrize(
    ("tox", "command"),
    [
        # A factor condition never reaches the command, whatever the line after it.
        ("[tox]\nenvlist = py3-unit\n[testenv]\ncommands =\n    unit: python -m pytest tests\n",
         "python -m pytest tests"),
        # Negation: `!pypy:` is kept for a CPython environment.
        ("[tox]\nenvlist = py313\n[testenv]\ncommands =\n    pypy: pytest -p no:x\n"
         "    !pypy: pytest -x\n", "pytest -x"),
        # No envlist: tox runs the `py` environment, whose factor is py.
        ("[testenv]\ncommands =\n    py: pytest -q\n    lint: ruff check .\n", "pytest -q"),
        # A generative section name holds the environment's commands.
        ("[tox]\nenvlist = py3{11,12}-tests, lint\n[testenv:py3{11,12}-tests]\n"
         "commands = pytest {posargs:-q tests}\n", "pytest -q tests"),
        # A reference to another section's commands.
        ("[base]\ncmd = pytest {posargs:-q}\n[testenv]\ncommands = {[base]cmd}\n", "pytest -q"),
        # tox 4 reads `#` as a comment anywhere in a value; `\\#` is a plain #.
        ("[testenv]\ncommands = pytest -k 'not slow' # the slow ones in CI\n",
         "pytest -k 'not slow'"),
    ],
)  # fmt: skip
def test_factor_conditions_and_substitutions(
    make_repo: Callable[..., Path], tox: str, command: str
) -> None:
    found = detect_test_command(make_repo({"tox.ini": tox}))
    assert found is not None and found[0] == command


@pytest.mark.parametrize(
    ("tox", "why"),
    [
        # A path only tox knows: the guess from the files, and why.
        ("[testenv]\ncommands = pytest {envsitepackagesdir}/pkg\n", "{envsitepackagesdir}"),
        # Only lint and docs environments: nothing of tox's is the tests.
        ("[tox]\nenvlist = lint, docs\n[testenv:lint]\ncommands = ruff check .\n"
         "[testenv:docs]\ncommands = sphinx-build docs out\n", None),
        # Every test line is for a factor no environment has.
        ("[tox]\nenvlist = py312\n[testenv]\ncommands =\n    integration: pytest it/\n", None),
    ],
)  # fmt: skip
def test_what_cannot_be_read_with_confidence_falls_back_to_the_files_with_the_reason(
    make_repo: Callable[..., Path], tox: str, why: str | None
) -> None:
    found = detect_test_command(make_repo({"tox.ini": tox, "tests/test_x.py": ""}))
    assert found is not None
    command, reason = found
    assert command == "python -m pytest"
    assert reason.startswith("tests/ folder")
    if why is not None:
        assert "tox.ini" in reason and why in reason


def test_legacy_tox_ini_in_pyproject_is_read_as_tox_ini(make_repo: Callable[..., Path]) -> None:
    pyproject = '[tool.tox]\nlegacy_tox_ini = """\n' + _tox("attrs-26.1.0.ini") + '"""\n'
    found = detect_test_command(make_repo({"pyproject.toml": pyproject, **PY312}))
    assert found is not None
    assert found[0] == "pytest -n auto"
    assert "[tool.tox] legacy_tox_ini in pyproject.toml" in found[1]


def test_tox_in_setup_cfg_is_read_as_tox_ini(make_repo: Callable[..., Path]) -> None:
    setup_cfg = (
        "[tox:tox]\nenvlist = py3-tests, lint\n\n[testenv]\ncommands =\n"
        "    tests: pytest {posargs:tests}\n    lint: ruff check .\n"
    )
    assert detect_test_command(make_repo({"setup.cfg": setup_cfg})) == (
        "pytest tests",
        "commands of [testenv] in setup.cfg for the py3-tests environment",
    )
