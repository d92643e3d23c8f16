"""Benchmark: one repository, one session across `tui-engineer serve` tabs (issue 37 §2).

A real `serve` process on a fresh repository, tabs opened as textual-serve's page opens them (a
websocket each), the scripted model over HTTP answering the plan and step 1 at once and holding
step 2 (prepared ahead) as a slow model does. Per run, once the first tab shows step 1 for
review:

- reload: its websocket closes and a new one opens, as a browser reload does. Prints the time
  from the close to step 1 shown again in the new tab, and the plan calls the reload made
  (target 0; before this change a reload planned the request again: 1);
- take over: a second tab opens, is told another tab holds the session, and `t` is typed
  there. Prints the time from `t` to step 1 shown in the second tab (the first tab's session
  stopped cleanly meanwhile), and the plan calls the take-over made.

Run: python benchmarks/serve_tabs.py [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.accept_latency import make_repo  # noqa: E402
from tests.browser_support import stop_process_group  # noqa: E402
from tests.conftest import GIT_IDENTITY  # noqa: E402
from tests.e2e.test_serve import free_port, wait_until_up  # noqa: E402
from tests.e2e.test_serve_resume import Tab  # noqa: E402
from tests.engine_support import KEY, MUL_ON_SUB, SUB, plan_reply  # noqa: E402
from tests.scripted_server import Gate, Reply, ScriptedServer  # noqa: E402
from tests.timing_support import plan_calls  # noqa: E402


async def one_run(kind: str, folder: Path, env: dict[str, str]) -> tuple[float, int, float]:
    """Seconds from the reload (or `t`) to step 1 shown in the new tab, its plan calls, and
    the seconds the first tab took from its opening to step 1 shown (for comparison)."""
    repo = make_repo(folder)
    held = Gate()
    server = ScriptedServer().start()
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL_ON_SUB, hold=held),
        Reply(text=MUL_ON_SUB, hold=held),  # step 2 prepared again in the new tab
    )
    port = free_port()
    command = [sys.executable, "-m", "tui_engineer", "serve", "--port", str(port)]
    command += ["add sub and mul", "--base-url", server.base_url, "--model", "test-model"]
    log = (folder / f"serve-{port}.log").open("wb")
    proc = subprocess.Popen(
        command, cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"ws://127.0.0.1:{port}/ws?width=140&height=40"
    try:
        await asyncio.to_thread(wait_until_up, f"http://127.0.0.1:{port}/", proc)
        async with aiohttp.ClientSession() as http:
            opened = time.monotonic()
            first_ws = await http.ws_connect(url)
            await Tab(first_ws).until("review step 1", timeout=180)
            fresh = time.monotonic() - opened
            before = plan_calls(server)
            if kind == "reload":
                await first_ws.close()
                began = time.monotonic()
                async with http.ws_connect(url) as ws:
                    await Tab(ws).until("goes on with session", "review step 1", timeout=180)
                    took = time.monotonic() - began
            else:
                async with http.ws_connect(url) as ws:
                    second = Tab(ws)
                    await second.until("Take over", timeout=180)
                    began = time.monotonic()
                    await ws.send_str(json.dumps(["stdin", "t"]))
                    await second.until("Took over session", "review step 1", timeout=180)
                    took = time.monotonic() - began
                await first_ws.close()
        return took, plan_calls(server) - before, fresh
    finally:
        held.open()
        stop_process_group(proc)
        log.close()
        server.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, **GIT_IDENTITY, "OPENAI_API_KEY": KEY}
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
            env[name] = str(folder / name.lower())
        print(f"serve tabs, {args.runs} runs each, load {os.getloadavg()[0]:.1f}")
        firsts: list[float] = []
        for kind, what in (
            ("reload", "reload -> step 1 shown again"),
            ("take over", "take over (t) -> step 1 shown in the new tab"),
        ):
            times, plans = [], []
            for _ in range(args.runs):
                took, planned, fresh = await one_run(kind, folder, env)
                times.append(took)
                plans.append(planned)
                firsts.append(fresh)
            print(
                f"  {what}: median {statistics.median(times):.2f} s "
                f"(runs: {', '.join(f'{t:.2f}' for t in times)}); "
                f"plan calls per {kind}: {', '.join(map(str, plans))}"
            )
        print(
            f"  for comparison, a new tab from opening to step 1 shown (plan and step 1 asked, "
            f"tests run): median {statistics.median(firsts):.2f} s"
        )
        print(f"  load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
