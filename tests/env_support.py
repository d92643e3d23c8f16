"""A project's own environment for tests, as users have it: a virtualenv in the repository
(`.venv`, ignored by git) with today's pytest from the package index and none of the dev extras
this suite runs with (no pytest-testmon).

The wheels are downloaded once per test session (`pytest_wheels`; the tests skip, saying why,
when the index cannot be reached) and unpacked into each venv: pure-Python wheels installed the
way pip lays them out, dist-info and entry points included, in well under a second.

The test command is `<repo>/.venv/bin/python -m pytest -q`; the local sandbox shows the venv
(read-only) when it is the active one, so tests set VIRTUAL_ENV to it (`activate`)."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tui_engineer.bench.hidden import SAFE_EXTRACT

# A project of add and sub with their tests, whose own `.venv` (project_venv) git ignores.
VENV_PROJECT = {
    ".gitignore": ".venv/\n",
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    assert sub(3, 1) == 2\n"
    ),
}


@pytest.fixture(scope="session")
def pytest_wheels(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """pytest and what it needs, as wheels from the package index (pip's cache helps)."""
    folder = tmp_path_factory.mktemp("pytest-wheels")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(folder),
         "pytest"],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"pip could not download pytest from the package index: {done.stderr[-300:]}")
    return sorted(folder.glob("*.whl"))


def unpacked_sdist(folder: Path, requirement: str) -> Path:
    """`requirement`'s source release from the package index (`name==version`), unpacked in
    `folder`: a real project nobody here wrote, with its own tests. Returns its tree; skips the
    test, saying why, when pip cannot download it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
         "-d", str(folder), requirement],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"pip could not download {requirement}'s sdist: {done.stderr[-300:]}")
    (archive,) = folder.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(folder, **SAFE_EXTRACT)
    return next(p for p in folder.iterdir() if p.is_dir())


def project_venv(repo: Path, wheels: list[Path], plugins: dict[str, str] | None = None) -> Path:
    """`repo/.venv` with the `wheels` installed and the given pytest plugins (entry-point name
    → module source, registered like an installed plugin). Returns the venv folder."""
    venv = repo / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
    for entry, source in (plugins or {}).items():
        module = entry.replace("-", "_") + "_fake"
        (site / f"{module}.py").write_text(source)
        info = site / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {entry}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[pytest11]\n{entry} = {module}\n")
    return venv


def activate(monkeypatch: pytest.MonkeyPatch, venv: Path) -> str:
    """The venv is the active one (as after `source .venv/bin/activate`); returns the test
    command that runs its pytest."""
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    return f"{venv}/bin/python -m pytest -q"
