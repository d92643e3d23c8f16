"""Benchmarks print numbers and assert nothing, so nothing else notices when one stops running
(show_requests.py stopped with an ImportError for a while): each one checked here runs as a user
runs it, and prints its numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # a whole process; with llama-cpp-python it loads the tiny model


def test_show_requests_prints_what_a_show_costs() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "show_requests.py"), "--lines", "1200"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "big.py: 1,204 lines, `scale` at line" in out, out
    assert "first prompt (big.py as the context shows it):" in out
    assert "SHOW big.py::scale:" in out and "(big.py:" in out, out


def test_session_phases_prints_each_phase_of_a_warm_session() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "session_phases.py"), "--files", "200",
         "--rounds", "1", "--venv", str(Path(sys.executable).parent.parent)],  # this one's
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    table = [line for line in done.stdout.splitlines() if line.endswith(" s |")]
    rows = {line.split(" | ")[0].lstrip("| ") for line in table}
    assert rows == {
        "process start → session started", "→ first model call",
        "first reply → first test run", "last run finished → proposal", "decision → committed",
        "committed → process ended", "these phases in all",
    }, done.stdout  # fmt: skip
