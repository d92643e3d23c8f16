"""A test stuck on an await nothing resolves fails soon, with the stack of what it waited for
(tests/stuck_tasks.py): a real pytest process over a tiny async suite, the plugin loaded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STUCK = """
import asyncio


async def wait_for_the_answer(answer):
    return await answer


async def test_waits_for_ever():
    await wait_for_the_answer(asyncio.get_running_loop().create_future())
"""


def test_a_test_stuck_on_a_future_fails_naming_the_await(tmp_path: Path) -> None:
    (tmp_path / "test_stuck.py").write_text(STUCK)
    env = {**os.environ, "TUI_TEST_STUCK_AFTER": "2", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.stuck_tasks", "-p", "asyncio",
         "-o", "asyncio_mode=auto", "-p", "no:cacheprovider", "test_stuck.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 1, out  # failed, in seconds rather than at pytest-timeout's 20 min
    assert "still waiting after 2 s" in out
    assert "wait_for_the_answer" in out  # the await it was stuck in, by name
