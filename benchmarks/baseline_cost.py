"""Benchmark: what the baseline (the suite on the starting commit, issue 18) adds to a session's
wall time. It runs beside the planning call; the first edit waits for it (same shadow), so with a
model slower than the suite it should cost nothing on the critical path (target 0 s).

A planned one-step session on a repository whose suite takes `--suite` seconds (one sleeping
test among quick ones), a scripted model answering each call after `--latency` seconds, local
sandbox, with the baseline on and off (`baseline = false`), alternating, best of `--rounds`.
Each baseline-on session gets a fresh repository (no result recorded for its tree).

Run: python benchmarks/baseline_cost.py [--latency 2] [--suite 1.5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import GIT_IDENTITY, git, write_files  # noqa: E402
from tests.engine_support import edit, plan_reply, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402


def make_repo(folder: Path, suite: float) -> Path:
    repo = folder / "repo"
    files = {
        "calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": (
            "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        ),
        "tests/test_slow.py": f"import time\n\n\ndef test_slow():\n    time.sleep({suite})\n",
    }
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    return repo


async def session(server: ScriptedServer, suite: float, latency: float, baseline: bool) -> float:
    change = edit("calc.py", "    return a + b\n", "    return b + a\n")
    server.script(
        Reply(text=plan_reply("Swap add's operands"), delay=latency),
        Reply(text=change, delay=latency),
    )
    with tempfile.TemporaryDirectory(prefix="baseline-bench-") as tmp:
        repo = make_repo(Path(tmp), suite)
        start = time.perf_counter()
        result, seen = await run_headless(
            repo, "swap add's operands", server.base_url, baseline=baseline,
            test_command=f"{sys.executable} -m pytest -q", sandbox="local",
        )  # fmt: skip
        wall = time.perf_counter() - start
    assert result.exit_code == 0, result.message
    if os.environ.get("BASELINE_BENCH_TRACE"):
        t0 = seen.events[0].at
        for e in seen.events:
            if e.type in {
                "model_call_started",
                "model_exchange",
                "edits_applied",
                "tests_started",
                "tests_finished",
                "baseline_ready",
                "step_committed",
                "session_finished",
            }:
                print(f"      {e.at - t0:6.2f} {e.type}")
    if baseline:
        (ready,) = seen.of(ev.BaselineReady)
        print(f"    baseline run: {ready.summary} (ready after {ready.seconds:.2f}s)")
    return wall


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--suite", type=float, default=1.5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(GIT_IDENTITY)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0123456789abcdef")
    walls: dict[bool, list[float]] = {True: [], False: []}
    with ScriptedServer() as server:
        for _ in range(args.rounds):
            for baseline in (False, True):
                wall = await session(server, args.suite, args.latency, baseline)
                walls[baseline].append(wall)
                print(f"  baseline {'on ' if baseline else 'off'}: {wall:.2f}s")
    off, on = min(walls[False]), min(walls[True])
    mid_off, mid_on = statistics.median(walls[False]), statistics.median(walls[True])
    print(
        f"model {args.latency:.1f}s/call, suite {args.suite:.1f}s: wall off {off:.2f}s best / "
        f"{mid_off:.2f}s median, on {on:.2f}s / {mid_on:.2f}s: the baseline adds "
        f"{on - off:+.2f}s (best) / {mid_on - mid_off:+.2f}s (median) on the critical path"
    )


if __name__ == "__main__":
    asyncio.run(main())
