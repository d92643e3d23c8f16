"""A project's own linters in its own environment, as users have them: ruff and mypy installed
in the repository's `.venv` (ignored by git), not in this suite's environment.

The wheels come from the package index once per test session (the tests skip, saying why, when
it cannot be reached) and are unpacked into each venv the way pip lays them out: the packages in
site-packages, a wheel's scripts (ruff's binary) and console scripts (mypy) in bin/."""

from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# The calc project with ruff declared in pyproject.toml, its tests run by this suite's pytest.
RUFF_PROJECT = {
    ".gitignore": ".venv/\n",
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n\n[tool.ruff]\nline-length = 100\n',
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
TESTS = f"{sys.executable} -m pytest -q"  # the tests run with this suite's pytest


def _download(folder: Path, *names: str) -> list[Path]:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(folder),
         *names],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"pip could not download {names} from the package index: {done.stderr[-300:]}")
    return sorted(folder.glob("*.whl"))


@pytest.fixture(scope="session")
def ruff_wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _download(tmp_path_factory.mktemp("ruff-wheels"), "ruff")


@pytest.fixture(scope="session")
def mypy_wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return _download(tmp_path_factory.mktemp("mypy-wheels"), "mypy")


def tool_venv(repo: Path, wheels: list[Path]) -> Path:
    """`repo/.venv` with the wheels installed (scripts and console scripts in bin/)."""
    venv = repo / ".venv"
    if not venv.is_dir():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
    for data in site.glob("*.data"):
        for script in (data / "scripts").glob("*"):
            target = venv / "bin" / script.name
            script.rename(target)
            target.chmod(0o755)
    for points in site.glob("*.dist-info/entry_points.txt"):
        _console_scripts(venv, points)
    return venv


def _console_scripts(venv: Path, points: Path) -> None:
    parser = configparser.ConfigParser()
    parser.read_string(points.read_text())
    if not parser.has_section("console_scripts"):
        return
    for name, target in parser.items("console_scripts"):
        module, _, func = target.partition(":")
        script = venv / "bin" / name
        script.write_text(
            f"#!{venv}/bin/python\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n"
        )
        script.chmod(0o755)
