"""Benchmark: the first session on a big repository in the TUI, its request typed after a pause.

The first shadow on a repository is a checkout of every file. The TUI makes it while the human
types the first request (vcs/spare_ahead.py), so the session takes it as a spare. This runs the
real app (Pilot, in this process) on a generated repository (benchmarks/scale.py's: N modules,
one planted bug, the scripted model answering at once) with an empty user cache, sends the
request `--typed` seconds after the app is ready (0: at once, the checkout still running), and
prints, from the session's record: the shadow's time as the session waited for it, whether it
came from a spare, and the time from the request to the first model call.

Run: python benchmarks/first_shadow.py [--files 40000] [--typed 0,5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale  # noqa: E402

from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tests.tui.app_support import SIZE, make_app, send_chat, wait_for  # noqa: E402
from tui_engineer.records.recorder import read_record, runs_dir  # noqa: E402


async def session(repo: Path, base_url: str, typed: float) -> str:
    app = make_app(repo, base_url, plan=False, approval="auto")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.status.phase == "ready", timeout=120)
        await asyncio.sleep(typed)  # the human typing the request
        sent = time.time()
        await send_chat(pilot, scale.REQUEST)

        def committed() -> bool:
            """the step to be committed"""
            return "a + b" in (repo / "pkg" / "core.py").read_text()

        await wait_for(pilot, committed, timeout=600)
        await app.stop_work()
    (record,) = runs_dir(repo).glob("*.jsonl")
    events = read_record(record)
    shadow = next(e for e in events if e["type"] == "shadow_ready")
    call = next(e for e in events if e["type"] == "model_call_started")
    kind = "from a spare" if shadow["from_spare"] else "a checkout of every file"
    return (
        f"typed after {typed:.0f} s: shadow {shadow['seconds']:.2f} s ({kind}), first model call "
        f"{float(call['at']) - sent:.2f} s after the request"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40_000)
    parser.add_argument("--typed", default="0,5", help="seconds before the request, comma list")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tui-first-shadow-") as tmp:
        template = scale.make_repo(Path(tmp) / "template", args.files)
        for typed in (float(t) for t in args.typed.split(",")):
            cache = Path(tmp) / "cache"
            shutil.rmtree(cache, ignore_errors=True)  # the first session on this repository
            os.environ["XDG_CACHE_HOME"] = str(cache)
            os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
            repo = Path(tmp) / "repo"
            shutil.rmtree(repo, ignore_errors=True)
            shutil.copytree(template, repo, symlinks=True)
            with ScriptedServer() as server:
                server.script(*[Reply(text=scale.FIX)] * 4)
                print(asyncio.run(session(repo, server.base_url, typed)), flush=True)
    print(f"{args.files:,} files, load {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M')}")


if __name__ == "__main__":
    main()
