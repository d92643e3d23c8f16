"""Which checks a project declares, read from its own files as real projects write them: a
pre-commit config (local hooks, published hooks mapped to the tool, ones we cannot run), pyproject
tool tables with the tool in the repository's venv (not ours), package.json scripts, Cargo with
its CI; and how a check's findings are judged against the starting commit's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tui_engineer.config.settings import Settings
from tui_engineer.session.prepare import project_checks
from tui_engineer.verify.checks.declared import chosen, find_checks
from tui_engineer.verify.checks.findings import judge
from tui_engineer.verify.checks.fixers import end_of_file, trailing_whitespace

# As in many projects (trimmed from pydantic's and attrs' configs), plus a local hook.
PRE_COMMIT = """repos:
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v4.6.0
    hooks:
      - id: trailing-whitespace
      - id: end-of-file-fixer
      - id: check-yaml
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.6.9
    hooks:
      - id: ruff
        args: [--fix, --exit-non-zero-on-fix]
      - id: ruff-format
        exclude: ^migrations/
  - repo: local
    hooks:
      - id: no-print
        name: no print calls
        entry: scripts/no_print.sh
        language: script
        types: [python]
        files: ^src/
      - id: eslint
        entry: eslint
        language: node
"""


def _venv_with(root: Path, *programs: str) -> None:
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for program in programs:
        path = root / ".venv" / "bin" / program
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)


@pytest.fixture
def bare_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No tool of the machine on PATH, no active virtualenv: only what a test puts there."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))


@pytest.mark.usefixtures("bare_path")
def test_a_pre_commit_config_gives_local_hooks_mapped_tools_and_our_fixers(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    _venv_with(tmp_path, "ruff")
    found = find_checks(tmp_path)
    ids = [c.id for c in found.checks]
    assert ids == ["trailing-whitespace", "end-of-file-fixer", "ruff", "ruff-format", "no-print"]
    ruff = found.checks[2]
    assert ruff.command.startswith(str(tmp_path / ".venv/bin/ruff") + " check")
    assert "--fix" not in ruff.command  # we report; the model fixes
    assert "repository's own .venv/" in ruff.reason
    assert found.checks[3].formatter and found.checks[0].formatter
    assert not found.checks[3].applies_to("migrations/0001.py") and ruff.applies_to("a/b.pyi")
    hook = found.checks[4]
    assert hook.name == "no print calls" and hook.applies_to("src/a.py")
    assert not hook.applies_to("tests/a.py") and not hook.applies_to("src/a.txt")
    missing = " ".join(found.missing)
    assert "'check-yaml'" in missing and "'eslint' (language node)" in missing


@pytest.mark.usefixtures("bare_path")
def test_pyproject_tables_need_the_tool_in_the_users_environment(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n[tool.mypy]\nstrict = true\n")
    _venv_with(tmp_path, "ruff")
    found = find_checks(tmp_path)
    assert [c.name for c in found.checks] == ["ruff check"]
    (said,) = found.missing
    assert "mypy is declared (pyproject.toml [tool.mypy])" in said and "not installed" in said


def test_this_programs_own_environment_is_not_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = Path(sys.prefix) / "bin"
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.setenv("PATH", f"{ours}{os.pathsep}{tmp_path / 'none'}")
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n")
    assert find_checks(tmp_path).checks == []


@pytest.mark.usefixtures("bare_path")
def test_package_json_scripts_and_cargo_from_its_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    for program in ("npm", "cargo", "cargo-clippy"):
        (tools / program).write_text("#!/bin/sh\n")
        (tools / program).chmod(0o755)
    monkeypatch.setenv("PATH", str(tools))
    scripts = {"test": "jest", "lint": "eslint .", "typecheck": "tsc --noEmit"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    (tmp_path / "Cargo.toml").write_text("[package]\nname = 'x'\n")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text(
        "steps:\n  - run: cargo clippy -- -D warnings\n  - run: cargo fmt --check\n"
    )
    found = find_checks(tmp_path)
    assert [c.command for c in found.checks] == [
        "npm run -s lint",
        "npm run -s typecheck",
        "cargo clippy --quiet --message-format=short -- -D warnings",
    ]
    assert "rustfmt is not installed" in " ".join(found.missing)


@pytest.mark.usefixtures("bare_path")
def test_the_setting_chooses_by_name_and_says_a_name_not_found(tmp_path: Path) -> None:
    (tmp_path / ".pre-commit-config.yaml").write_text(PRE_COMMIT)
    found = find_checks(tmp_path)
    kept, said = chosen(found, "trailing-whitespace, mypy")
    assert [c.id for c in kept] == ["trailing-whitespace"]
    assert len(said) == 1 and "'mypy'" in said[0]
    assert chosen(found, "none") == ([], [])
    assert chosen(found, "auto")[0] == found.checks


def test_a_finding_is_new_by_file_and_message_not_by_line() -> None:
    before = "calc.py:1:8: F401 [*] `sys` imported but unused\n"
    now = (
        "calc.py:4:8: F401 [*] `sys` imported but unused\n"
        "calc.py:1:8: F401 [*] `os` imported but unused\nFound 2 errors.\n"
    )
    result = judge("ruff check", "ruff check calc.py", (1, now, 0.1), (1, before))
    assert not result.ok
    assert [f.message for f in result.new] == ["F401 [*] `os` imported but unused"]
    assert len(result.old) == 1 and "1 new finding, 1 from before" in result.summary()
    assert "`os` imported but unused" in result.for_model()
    old_only = judge("ruff check", "ruff check calc.py", (1, before, 0.1), (1, before))
    assert old_only.ok


def test_output_without_findings_is_judged_by_the_exit_code() -> None:
    assert not judge("lint", "npm run lint", (1, "boom", 1.0), (0, "")).ok
    assert judge("lint", "npm run lint", (1, "boom", 1.0), (1, "boom")).ok


def test_the_two_text_fixers() -> None:
    assert trailing_whitespace(b"a = 1  \nb = 2\t\n") == b"a = 1\nb = 2\n"
    assert end_of_file(b"x\n\n\n") == b"x\n" and end_of_file(b"x") == b"x\n"
    assert end_of_file(b"\n") == b""


@pytest.mark.usefixtures("bare_path")
def test_a_ci_workflows_python_tools_come_last(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n")
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/lint.yml").write_text(
        "steps:\n  - run: ruff check .\n  - run: mypy src\n  - run: black --check .\n"
    )
    _venv_with(tmp_path, "ruff", "mypy")
    found = find_checks(tmp_path)
    assert [(c.id, c.reason.split(";")[0]) for c in found.checks] == [
        ("ruff", "pyproject.toml [tool.ruff]"),  # the more specific source says it first
        ("mypy", "a CI workflow runs mypy"),
    ]
    assert "black is declared (a CI workflow runs black)" in found.missing[0]


@pytest.mark.usefixtures("bare_path")
def test_the_docker_sandbox_says_the_checks_are_not_run_there(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\n")
    _venv_with(tmp_path, "ruff")
    assert [c.id for c in project_checks(tmp_path, Settings())[0]] == ["ruff"]
    checks, said = project_checks(tmp_path, Settings(sandbox="docker"))
    assert checks == [] and "local sandbox only" in said[0]
    assert project_checks(tmp_path, Settings(project_checks="none")) == ([], [])


@pytest.mark.usefixtures("bare_path")
def test_djangos_tox_lint_environments_declare_black_and_flake8(tmp_path: Path) -> None:
    data = Path(__file__).parent.parent / "data" / "tox" / "django-5.2.ini"
    (tmp_path / "tox.ini").write_text(data.read_text())
    _venv_with(tmp_path, "black", "flake8")
    found = find_checks(tmp_path)
    assert sorted((c.id, c.reason.split(";")[0]) for c in found.checks) == [
        ("black", "tox.ini runs black"),
        ("flake8", "tox.ini runs flake8"),
    ]


@pytest.mark.usefixtures("bare_path")
def test_agents_md_and_a_noxfile_name_their_tools_agents_md_first(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# Checks\n\nBefore a commit run `mypy src` and tests.\n")
    (tmp_path / "noxfile.py").write_text(
        'import nox\n\n\n@nox.session\ndef lint(session):\n    session.install("ruff", "mypy")\n'
        '    session.run("ruff", "check", ".")\n    session.run("mypy", "src")\n'
    )
    _venv_with(tmp_path, "ruff", "mypy")
    found = find_checks(tmp_path)
    assert [(c.id, c.reason.split(";")[0]) for c in found.checks] == [
        ("mypy", "AGENTS.md says to run mypy"),
        ("ruff", "noxfile.py runs ruff check"),
    ]
