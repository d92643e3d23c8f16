"""Benchmark: one scripted headless step (zero model latency, small repo, pytest).

Prints the session's wall time, the test command's own time, and the difference: the tool's
overhead. Also times `tui-engineer --help`. Targets on the project machine: overhead < 1 s,
--help < 0.3 s. Run: python benchmarks/headless_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.engine_support import edit, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402

FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
REPLY = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
)


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    os.environ.update({k: v for k, v in env.items() if k.startswith("GIT_")})
    return repo


async def one_session() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        repo = make_repo(Path(tmp))
        server.script(Reply(text=REPLY))
        started = time.perf_counter()
        result, seen = await run_headless(repo, "add sub", server.base_url, plan=False)
        wall = time.perf_counter() - started
        assert result.exit_code == 0, result.message
        tests = sum(e.duration for e in seen.of(ev.TestsFinished))
        return wall, tests


def help_time() -> float:
    started = time.perf_counter()
    subprocess.run(["tui-engineer", "--help"], check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    results = [asyncio.run(one_session()) for _ in range(runs)]
    wall = statistics.median(r[0] for r in results)
    tests = statistics.median(r[1] for r in results)
    helps = statistics.median(help_time() for _ in range(5))
    print(f"one-step headless session (median of {runs}):")
    print(f"  total wall time     {wall:6.3f} s")
    print(f"  test command time   {tests:6.3f} s")
    print(f"  tool overhead       {wall - tests:6.3f} s   (target < 1 s)")
    print(f"tui-engineer --help   {helps:6.3f} s   (target < 0.3 s)")


if __name__ == "__main__":
    main()
