"""The demo's sample project: a tiny calculator with one test, committed in a fresh git repo."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from tui_engineer.base.sample_mark import SAMPLE_EMAIL

FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "pytest.ini": "[pytest]\naddopts = -q\n",
    "README.md": "# calc\n\nA tiny calculator: the sample project of `tui-engineer demo`.\n",
}


def make_sample_repo(parent: Path | None = None) -> Path:
    """A new folder (under `parent`, default the system temp folder) holding the committed
    sample project. It is kept after the demo, so its commits can be looked at."""
    if parent is not None:
        parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="tui-engineer-demo-", dir=parent))
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    # A throwaway repo: its own identity, so accepting works on a machine with no git identity.
    git("config", "user.name", "tui-engineer demo")
    git("config", "user.email", SAMPLE_EMAIL)  # marks it too (sample_mark.py)
    git("add", "-A")
    git("commit", "-q", "-m", "Sample project: add() and its test")
    return root
