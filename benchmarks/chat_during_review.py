"""Benchmark: the wait after `a` when a chat message was sent during the review (issue 37 §1).

Real headless sessions (real git repo, real pytest runs, the scripted model over HTTP answering
each step after `--latency` seconds): a three-step plan; the reviewer reads step 1 until step 2
is prepared ahead, then, per mode,

- sends nothing and accepts;
- sends a message about step 1 ("please give sub a docstring") and accepts at once;
- sends a message naming step 2 ("in step 2 keep mul on one line"), reads on for `--review`
  seconds, and accepts.

Prints the time from the accept to step 2's proposal shown for review, and step 2's proposal
calls. Before this change (issue 37) any message made the accept wait for a fresh call for step
2: 29.0 s with a real model answering in 10–30 s, against 0.64 s without the message.

Run: python benchmarks/chat_during_review.py [--latency 10] [--review 4] [--runs 2]
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

from benchmarks.accept_latency import make_repo  # noqa: E402
from tests.conftest import GIT_IDENTITY  # noqa: E402
from tests.engine_support import DIV, MUL_ON_SUB, SUB, plan_reply, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402
from tui_engineer.engine.inbox import Inbox  # noqa: E402
from tui_engineer.engine.reviews.review import Decision  # noqa: E402

MODES = {
    "no message": ("", 0.0),
    "a message about step 1": ("please give sub a docstring", 0.0),
    "a message naming step 2, then reading on": ("in step 2 keep mul on one line", None),
}


class Reviewer:
    """Reads step 1 until step 2 is prepared, sends `message`, reads `then` seconds, accepts."""

    def __init__(self, inbox: Inbox, message: str, then: float) -> None:
        self.inbox, self.message, self.then = inbox, message, then
        self.prepared = asyncio.Event()
        self.accepted = self.shown_2 = 0.0
        self.reviews = 0

    def sink(self, event: ev.Event) -> None:
        if isinstance(event, ev.NextStepPrepared) and event.ready and event.step == 2:
            self.prepared.set()
        if isinstance(event, ev.ProposalReady) and event.step == 2 and not self.shown_2:
            self.shown_2 = time.monotonic()

    async def review(self, proposal):
        self.reviews += 1
        if self.reviews == 1:
            await self.prepared.wait()
            if self.message:
                self.inbox.put_nowait(self.message)
            await asyncio.sleep(self.then)
            self.accepted = time.monotonic()
        return Decision.accept()

    async def still_wrong(self):
        return None

    async def verdict(self):
        return None


async def one_run(parent: Path, latency: float, message: str, then: float) -> tuple[float, int]:
    """The wait from the accept to step 2's review, and step 2's proposal calls."""
    repo = make_repo(parent)
    steps = [SUB, MUL_ON_SUB, MUL_ON_SUB, DIV] if "step 2" in message else [SUB, MUL_ON_SUB, DIV]
    with ScriptedServer() as server:
        server.script(
            Reply(text=plan_reply("Add sub", "Add mul", "Add div")),
            *(Reply(text=text, delay=latency) for text in steps),
        )
        inbox = Inbox()
        reviewer = Reviewer(inbox, message, then)
        calls: list[int] = []

        def sink(event: ev.Event) -> None:
            reviewer.sink(event)
            if isinstance(event, ev.ModelExchange) and event.step == 2:
                calls.append(2)

        result, _ = await run_headless(
            repo, "add sub, mul and div", server.base_url, reviewer=reviewer, sink=sink,
            inbox=inbox, pipeline=True,
        )  # fmt: skip
    assert result.exit_code == 0, result.message
    return reviewer.shown_2 - reviewer.accepted, len(calls)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=10.0, help="seconds each reply takes")
    parser.add_argument("--review", type=float, default=4.0, help="reading on after a message")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    os.environ.update(
        {**GIT_IDENTITY, "OPENAI_API_KEY": "sk-bench", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    print(f"model answers each step after {args.latency:g} s; {args.runs} run(s) per mode")
    with tempfile.TemporaryDirectory(prefix="tui-engineer-chat-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        for label, (message, then) in MODES.items():
            reading = args.review if then is None else then
            runs = [
                await one_run(Path(tmp), args.latency, message, reading) for _ in range(args.runs)
            ]
            waits = ", ".join(f"{w:.2f}" for w, _ in runs)
            median = statistics.median(w for w, _ in runs)
            print(
                f"{label}: a -> step 2's review {waits} s (median {median:.2f} s); "
                f"step 2's proposal calls {runs[0][1]}"
            )
    print("issue 37, before: 29.0 s with a message (two calls for step 2), 0.64 s without")


if __name__ == "__main__":
    asyncio.run(main())
