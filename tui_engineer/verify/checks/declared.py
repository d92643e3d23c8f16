"""The checks a project declares beside its tests, found from its own files, most specific first:
the pre-commit framework's config (its `repo: local` hooks, and the common hooks mapped to the
tool they run), then pyproject's tool tables (ruff, black, mypy), package.json's `lint` /
`typecheck` scripts, and Cargo (clippy, rustfmt) where the project says it uses them.

A Python tool is taken from the user's environment, never ours: the repository's own venv, the
active virtualenv, or PATH without this program's own environment. A check declared whose tool
is not there is said once (`Found.missing`), and the session goes on without it. The pre-commit
program itself is never run (its stash of unstaged changes must not touch the user's edits)."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from tui_engineer.verify.checks import precommit
from tui_engineer.verify.checks.found import Check, Found, python_check


def _pyproject(root: Path) -> dict:
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _pyproject_checks(root: Path) -> Found:
    found = Found()
    tools = _pyproject(root).get("tool", {})
    ruff = tools.get("ruff") if isinstance(tools.get("ruff"), dict) else None
    own = next((n for n in ("ruff.toml", ".ruff.toml") if (root / n).is_file()), None)
    tables = [
        ("ruff", "pyproject.toml [tool.ruff]" if ruff is not None else own),
        ("ruff-format", "pyproject.toml [tool.ruff.format]" if ruff and "format" in ruff else None),
        ("black", "pyproject.toml [tool.black]" if "black" in tools else None),
        ("mypy", "pyproject.toml [tool.mypy]" if "mypy" in tools else _mypy_ini(root)),
    ]
    for check_id, declared in tables:
        if declared:
            found.merge(python_check(root, check_id, declared))
    return found


def _mypy_ini(root: Path) -> str | None:
    return next((n for n in ("mypy.ini", ".mypy.ini") if (root / n).is_file()), None)


def _package_json(root: Path) -> Found:
    found = Found()
    try:
        scripts = json.loads((root / "package.json").read_text(encoding="utf-8"))["scripts"]
    except (OSError, ValueError, KeyError, TypeError):
        return found
    for script in ("lint", "typecheck", "type-check"):
        if not isinstance(scripts.get(script), str):
            continue
        if shutil.which("npm") is None:
            found.missing.append(f"package.json's `{script}` script: npm is not installed: not run")
            continue
        reason = f"package.json scripts.{script}: {scripts[script]}"
        found.add(Check(script, f"npm run {script}", f"npm run -s {script}", reason, files=False))
    return found


def _cargo(root: Path) -> Found:
    found = Found()
    if not (root / "Cargo.toml").is_file():
        return found
    said = _workflow_text(root)
    clippy = next((n for n in ("clippy.toml", ".clippy.toml") if (root / n).is_file()), None)
    fmt = next((n for n in ("rustfmt.toml", ".rustfmt.toml") if (root / n).is_file()), None)
    clippy = clippy or ("a CI workflow runs cargo clippy" if "cargo clippy" in said else None)
    fmt = fmt or ("a CI workflow runs cargo fmt" if "cargo fmt" in said else None)
    cargo = shutil.which("cargo")
    for check_id, declared, command in (
        ("clippy", clippy, "cargo clippy --quiet --message-format=short -- -D warnings"),
        ("rustfmt", fmt, "cargo fmt --check"),
    ):
        if not declared:
            continue
        helper = "cargo-clippy" if check_id == "clippy" else "rustfmt"
        if cargo is None or shutil.which(helper) is None:
            found.missing.append(f"{command} is declared ({declared}); {helper} is not installed")
            continue
        name = command.split(" --")[0]
        found.add(Check(check_id, name, command, declared, files=False))
    return found


_CI_RUNS = (("ruff", "ruff check"), ("ruff-format", "ruff format"), ("mypy", "mypy "))
_CI_RUNS += (("black", "black "), ("flake8", "flake8"))


def _ci_python(root: Path) -> Found:
    """The Python tools a CI workflow runs (`ruff check .`, `mypy src`), from the user's
    environment like the rest."""
    return _python_tools_named(root, _workflow_text(root), "a CI workflow runs")


# The environments tox or nox make for lint and type checks name the tools they run (Django's
# tox.ini: `[testenv:black] commands = black --check --diff .`), with how the reason says it.
_TOX_NOX = (
    ("tox.ini", "tox.ini runs"),
    ("tox.toml", "tox.toml runs"),
    ("noxfile.py", "noxfile.py runs"),
)


def _agents_python(root: Path) -> Found:
    """The Python tools the repository's AGENTS.md tells an agent to run: the most specific
    source, said to us."""
    return _python_tools_named(root, _read(root / "AGENTS.md"), "AGENTS.md says to run")


def _tox_nox_python(root: Path) -> Found:
    found = Found()
    for name, how in _TOX_NOX:
        found.merge(_python_tools_named(root, _read(root / name), how))
    return found


def _python_tools_named(root: Path, text: str, how: str) -> Found:
    found = Found()
    words_of = text.replace('", "', " ").replace("', '", " ")  # nox: session.run("ruff", "check")
    for check_id, words in _CI_RUNS:
        if words in words_of:
            found.merge(python_check(root, check_id, f"{how} {words.strip()}"))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    except OSError:
        return ""


def _go(root: Path) -> Found:
    """`go vet ./...` for a module whose CI runs it (go test runs a part of vet already: the
    rest is what a project that asks for it wants)."""
    found = Found()
    if not (root / "go.mod").is_file() or "go vet" not in _workflow_text(root):
        return found
    if shutil.which("go") is None:
        found.missing.append("go vet is declared (a CI workflow runs it); go is not installed")
        return found
    reason = "a CI workflow runs go vet"
    found.add(Check("vet", "go vet", "go vet ./...", reason, files=False))
    return found


def _workflow_text(root: Path) -> str:
    folder = root / ".github" / "workflows"
    texts = []
    for path in sorted(folder.glob("*.y*ml")) if folder.is_dir() else []:
        try:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
    return "\n".join(texts)


def find_checks(root: Path) -> Found:
    """Every check the project declares, most specific source first (a tool declared twice
    runs once, as its first source says)."""
    found = Found()
    sources = (
        _agents_python, precommit.checks, _pyproject_checks, _package_json, _cargo, _go,
        _tox_nox_python, _ci_python,
    )  # fmt: skip
    for source in sources:
        found.merge(source(root))
    return found


def chosen(found: Found, setting: str) -> tuple[list[Check], list[str]]:
    """The checks the `project_checks` setting keeps ('auto': all found; 'none': none; else names),
    and sentences for names asked for that were not found."""
    words = [w.strip() for w in setting.replace(",", " ").split() if w.strip()]
    if words in ([], ["auto"]):
        return found.checks, []
    if words == ["none"]:
        return [], []
    kept = [c for c in found.checks if c.id in words]
    unknown = [w for w in words if all(w != c.id for c in found.checks)]
    names = ", ".join(c.id for c in found.checks) or "none"
    said = [f"check {w!r} is not one this project declares (found: {names})" for w in unknown]
    return kept, said
