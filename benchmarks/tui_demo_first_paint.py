"""First paint of `tui-engineer demo`: from a fresh interpreter to the app's first refresh
(imports, the sample repo, the demo server, the app's mount), run headless. Target < 1.5 s on
2 cores. Prints the median of 5 fresh processes.

    python benchmarks/tui_demo_first_paint.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile

CHILD = """
import time
t0 = time.perf_counter()
from pathlib import Path
from tui_engineer.demo import DEFAULT_REQUEST, DemoServer, demo_flags, make_sample_repo
from tui_engineer.headless.runner import RunOptions
from tui_engineer.tui.app import TuiEngineerApp

async def painted(pilot):
    await pilot.pause()
    print(f"{time.perf_counter() - t0:.3f}", flush=True)
    await pilot.app.stop_work()
    pilot.app.exit(0)

repo = make_sample_repo(Path(__import__("sys").argv[1]))
with DemoServer() as server:
    options = RunOptions(request=DEFAULT_REQUEST, repo=repo, flags=demo_flags(server.base_url))
    TuiEngineerApp(options).run(headless=True, size=(120, 40), auto_pilot=painted)
"""


def main() -> None:
    times = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as folder:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, folder], capture_output=True, text=True, check=True
            )
            times.append(float(out.stdout.strip().splitlines()[-1]))
    print("tui-engineer demo, first paint at 120x40 (median of 5 fresh processes):")
    print(f"  {statistics.median(times):.3f} s   (runs: {', '.join(f'{t:.2f}' for t in times)})")
    print("  target < 1.5 s on 2 cores")


if __name__ == "__main__":
    main()
