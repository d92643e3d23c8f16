"""Benchmark: the next step prepared during review vs not, on the generated 2,000-file repository
with a 300-test suite (benchmarks/affected_tests.py), a scripted model answering after 2 s and a
scripted reviewer that reads each proposal for 3 s before accepting.

Both modes start from the same primed state: one session first changed a module there and
collected the test-selection data (the collecting run is 2–3× slower than a plain one and a
first session pays it once), so the measured sessions show steady state. Prints, with and
without pipelining: the wait from each "accept" to the next proposal being ready for review, and
the session's wall time. Target: the pipelined wait ≤ 0.1× the other.

Run: python benchmarks/pipelining.py [--steps 4] [--latency 2] [--review 3] [--work 250000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.affected_tests import generate  # noqa: E402
from tests.engine_support import ReadingReviewer, edit, plan_reply, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402


def replies(steps: int, latency: float, first: int = 200) -> list[Reply]:
    """A plan of `steps` independent one-module changes (tests keep passing)."""
    modules = [first + 100 * k for k in range(steps)]
    plan = plan_reply(*(f"Change module {n}" for n in modules))
    changes = [
        edit(f"pkg/m{n:04}.py", f"    return x + {n}\n", f"    return {n} + x\n") for n in modules
    ]
    return [Reply(text=plan)] + [Reply(text=c, delay=latency) for c in changes]


async def prime(template: Path, work: Path) -> None:
    """A two-step session: the first step's plain run records the suite's time (narrowing starts
    once it is known to be slow), the second collects the selection data. Kept in work/primed
    and work/primed-cache."""
    repo = work / "repo"
    shutil.copytree(template, repo, symlinks=True)
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    with ScriptedServer() as server:
        server.script(*replies(2, 0.0, first=1000))
        result, _ = await run_headless(
            repo, "prime", server.base_url, test_command=f"{sys.executable} -m pytest -q",
            full_tests_always=False, pipeline=False,
        )  # fmt: skip
    assert result.exit_code == 0, result.message
    shutil.move(repo, work / "primed")
    shutil.move(work / "cache", work / "primed-cache")


async def run_mode(
    work: Path, pipeline: bool, args: argparse.Namespace
) -> tuple[list[float], float]:
    # The same path in both modes: the selection data is kept per repository path.
    repo, cache = work / "repo", work / "cache"
    for folder in (repo, cache):
        shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(work / "primed", repo, symlinks=True)
    shutil.copytree(work / "primed-cache", cache, symlinks=True)
    os.environ["XDG_CACHE_HOME"] = str(cache)
    stamps: list[tuple[float, ev.Event]] = []
    with ScriptedServer() as server:
        server.script(*replies(args.steps, args.latency))
        started = time.perf_counter()
        result, _ = await run_headless(
            repo,
            "change modules",
            server.base_url,
            reviewer=ReadingReviewer(args.review),
            sink=lambda e: stamps.append((time.perf_counter(), e)),
            test_command=f"{sys.executable} -m pytest -q",
            full_tests_always=False,
            pipeline=pipeline,
        )
        wall = time.perf_counter() - started
    assert result.exit_code == 0, result.message
    accepted = {e.step: t for t, e in stamps if isinstance(e, ev.DecisionMade)}
    ready = {e.step: t for t, e in stamps if isinstance(e, ev.ProposalReady)}
    waits = [ready[k] - accepted[k - 1] for k in sorted(ready) if k - 1 in accepted]
    return waits, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--latency", type=float, default=2.0, help="model latency, seconds")
    parser.add_argument("--review", type=float, default=3.0, help="reviewer's reading time")
    parser.add_argument("--work", type=int, default=250_000, help="loop size in each test")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    with tempfile.TemporaryDirectory(prefix="tui-bench-") as tmp:
        work = Path(tmp)
        template = work / "template"
        generate(template, 1700, 100, 199, args.work)
        print(
            f"repo: 2000 files, 300 tests; {args.steps} steps; model latency {args.latency:.1f} s;"
            f" reviewer reads {args.review:.1f} s"
        )
        asyncio.run(prime(template, work))
        results = {}
        for pipeline in (False, True):
            results[pipeline] = asyncio.run(run_mode(work, pipeline, args))
    for pipeline, label in ((False, "not pipelined"), (True, "pipelined (default)")):
        waits, wall = results[pipeline]
        shown = ", ".join(f"{w:.2f}" for w in waits)
        print(f"{label}:")
        print(f"  accept → next proposal ready   {statistics.mean(waits):6.2f} s  ({shown})")
        print(f"  session wall time              {wall:6.2f} s")
    ratio = statistics.mean(results[True][0]) / statistics.mean(results[False][0])
    print(f"ratio of the waits (pipelined / not): {ratio:.2f}  (target ≤ 0.1)")


if __name__ == "__main__":
    main()
