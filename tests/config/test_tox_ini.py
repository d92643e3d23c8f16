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
        ("pluggy-1.5.0.ini", {"testing/test_x.py": ""}, "_PYTEST_SETUP_SKIP_PLUGGY_DEP=1 pytest"),
        ("pytest-8.3.ini", {"testing/test_x.py": ""}, "PYTHONWARNDEFAULTENCODING=1 pytest"),
        ("requests-2.32.ini", {"tests/test_x.py": ""}, "pytest tests"),
        ("zope.event-6.2.ini", {"src/zope/event/tests.py": ""},
         "zope-testrunner --test-path=src -vc"),
        ("django-5.2.ini", {"tests/runtests.py": "", "package.json": '{"scripts": {"test": "x"}}'},
         "cd tests && PYTHONDONTWRITEBYTECODE=1 python runtests.py"),
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
        ("3.14.0", ("PYTHONWARNINGS=d python -m pytest -n auto", "commands of "
                    "[testenv:py3{9,10,14}-tests] in tox.ini for the py314-tests environment, "
                    "with its setenv")),
        # A Python no environment names: the envlist's first test environment.
        ("3.8.20", ("PYTHONWARNINGS=d python -m pytest -n auto", "commands of "
                    "[testenv:py3{9,10,14}-tests] in tox.ini for the py39-tests environment, "
                    "with its setenv")),
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


def test_setenv_reaches_the_test_command_and_a_repositorys_venv_keeps_it(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """tox passes its setenv to the tests (issue 48): Django's PYTHONDONTWRITEBYTECODE, attrs's
    PYTHONWARNINGS. A value naming a folder of tox's, or only building the commands, is not."""
    tox = (
        "[tox]\nenvlist = py3\n[testenv]\nsetenv =\n"
        "    PYTHONWARNINGS = error::DeprecationWarning\n"
        "    COVERAGE_FILE = {toxworkdir}/.coverage\n    ARGS = -x\n    PATH = /opt/bin\n"
        "    GREETING = two words\ncommands = pytest {env:ARGS}\n"
    )
    venv = {".venv/bin/pytest": "", ".venv/bin/python": "", ".venv/pyvenv.cfg": "version = 3.12\n"}
    repo = make_repo({"tox.ini": tox, "tests/test_x.py": "", **venv})
    monkeypatch.delenv("VIRTUAL_ENV")
    command, reason = detect_test_command(repo)  # type: ignore[misc]
    assert command == (
        "PYTHONWARNINGS=error::DeprecationWarning GREETING='two words' .venv/bin/pytest -x"
    )
    assert reason.endswith("with its setenv; the repository's own .venv/")


@pytest.mark.parametrize(
    ("data", "where", "command", "reason"),
    [
        # tox 4's own shape: its test environments' commands name folders only tox knows
        # ({work_dir}); its `fast` environment runs the tests plainly, so that is taken.
        ("tox-4.27-native.toml", "tox.toml",
         "pytest -m 'not integration and not slow' -n auto tests",
         "commands of [env.fast] in tox.toml for the fast environment"),
        ("everyday.toml", "tox.toml",
         "cd src && PYTHONWARNINGS=error python -m pytest ../tests -n 2",
         "commands of [env_run_base] in tox.toml for the py312 environment, with its set_env"),
    ],
)  # fmt: skip
def test_tox_toml_is_read_like_tox_ini(
    make_repo: Callable[..., Path], data: str, where: str, command: str, reason: str
) -> None:
    repo = make_repo({where: _tox(data), "tests/test_x.py": "", **PY312})
    assert detect_test_command(repo) == (command, reason)


def test_pyprojects_native_tool_tox_is_read_and_tox_ini_comes_first(
    make_repo: Callable[..., Path],
) -> None:
    native = (
        '[tool.tox]\nenv_list = ["3.12", "docs"]\n[tool.tox.env_run_base]\n'
        'commands = [["pytest", { replace = "posargs", default = ["-q"] }]]\n'
    )
    repo = make_repo({"pyproject.toml": native, "tests/test_x.py": "", **PY312})
    assert detect_test_command(repo) == (
        "pytest -q", "commands of [env_run_base] in [tool.tox] in pyproject.toml for the 3.12 "
        "environment",
    )  # fmt: skip
    (repo / "tox.ini").write_text("[tox]\nenvlist = py3\n[testenv]\ncommands = pytest tests\n")
    assert detect_test_command(repo)[0] == "pytest tests"  # type: ignore[index]


def test_a_tox_toml_that_cannot_be_read_says_why_and_the_files_decide(
    make_repo: Callable[..., Path],
) -> None:
    toml = '[env_run_base]\ncommands = [["pytest", "{env_site_packages_dir}/pkg"]]\n'
    repo = make_repo({"tox.toml": toml, "tests/test_x.py": "", **PY312})
    command, reason = detect_test_command(repo)  # type: ignore[misc]
    assert command == "python -m pytest"
    assert "tox's commands not used" in reason and "tox.toml" in reason
