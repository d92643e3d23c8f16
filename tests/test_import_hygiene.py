"""The engine and everything below it never import Textual: the TUI is one client of many."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tui_engineer"
UI_ONLY = {"tui"}  # folders allowed to import textual


def _engine_side_modules() -> list[Path]:
    return [
        path for path in PACKAGE.rglob("*.py") if path.relative_to(PACKAGE).parts[0] not in UI_ONLY
    ]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize(
    "module", _engine_side_modules(), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_no_textual_import_in_engine_side_module(module: Path) -> None:
    assert "textual" not in _imported_roots(module)


def test_importing_the_engine_loads_no_textual() -> None:
    code = (
        "import sys, tui_engineer.engine.session, tui_engineer.session.run; "
        "print('textual' in sys.modules or 'rich' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_the_app_paints_before_the_engine_and_the_model_sdk_load() -> None:
    # The openai SDK was over half of `tui-engineer demo`'s CPU time to its first frame, the
    # engine with GitPython a third of the rest: both load behind the first frame
    # (benchmarks/first_paint.py).
    heavy = ["openai", "git", "tui_engineer.engine.session", "tui_engineer.session.run"]
    code = (
        "import sys, tui_engineer.cli, tui_engineer.demo, tui_engineer.tui.app, "
        "tui_engineer.session.options; "
        f"print([name for name in {heavy!r} if name in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
