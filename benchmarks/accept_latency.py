"""Benchmark: a decision is final at once, whatever the model is doing (DESIGN.md invariant 8).

Two real headless sessions (real git repo, real pytest runs, the scripted model over HTTP):

1. accept → commit with a slow model: a two-step plan whose step 2 (prepared ahead while step 1
   is reviewed) is answered only after `--latency` seconds; the reviewer accepts step 1 as soon
   as step 2's call is in flight. Prints the time from the decision to step 1's commit on the
   branch (StepCommitted is said once the branch moved), per run.
2. model calls of a session whose step 1 needs one fix (its first try fails its new test), with
   a reviewer who reads step 1 until step 2 is prepared: the requests the server saw.

Run: python benchmarks/accept_latency.py [--latency 20] [--runs 3]
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

from tests.conftest import GIT_IDENTITY, SAMPLE_FILES, git, write_files  # noqa: E402
from tests.engine.test_engine_pipeline import by_conversation  # noqa: E402
from tests.engine_support import MUL_ON_SUB, SUB, plan_reply, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402
from tui_engineer.engine.reviews.review import Decision  # noqa: E402


def make_repo(parent: Path) -> Path:
    root = Path(tempfile.mkdtemp(dir=parent))
    git(root, "init", "-q", "-b", "main")
    write_files(root, SAMPLE_FILES)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


class AcceptWhenAsked:
    """Accepts step 1 once `asked()` (step 2's call is in flight, or prepared); later at once."""

    def __init__(self, asked) -> None:
        self.asked = asked
        self.reviews = 0

    async def review(self, proposal):
        self.reviews += 1
        while self.reviews == 1 and not self.asked():
            await asyncio.sleep(0.01)
        return Decision.accept()

    async def still_wrong(self):
        return None

    async def verdict(self):
        return None


class Times:
    """When step 1 was decided and when it was committed."""

    def __init__(self) -> None:
        self.decided = self.committed = 0.0
        self.prepared = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.DecisionMade) and event.step == 1:
            self.decided = time.monotonic()
        if isinstance(event, ev.StepCommitted) and event.step == 1:
            self.committed = time.monotonic()
        if isinstance(event, ev.NextStepPrepared) and event.ready:
            self.prepared = True


async def accept_to_commit(parent: Path, latency: float) -> float:
    repo = make_repo(parent)
    with ScriptedServer() as server:
        server.script(
            Reply(text=plan_reply("Add sub", "Add mul")),
            Reply(text=SUB),
            Reply(text=MUL_ON_SUB, delay=latency),  # a slow model writing step 2
        )
        times = Times()
        reviewer = AcceptWhenAsked(lambda: len(server.chat_requests) >= 3)
        result, _ = await run_headless(
            repo, "add sub and mul", server.base_url, reviewer=reviewer, sink=times,
            pipeline=True,
        )  # fmt: skip
    assert result.exit_code == 0, result.message
    return times.committed - times.decided


async def calls_with_one_fix(parent: Path) -> int:
    repo = make_repo(parent)
    with ScriptedServer() as server:
        # Step 1's first try fails its new test and needs one fix; answers by what is asked.
        server.script(*[by_conversation] * 12)
        times = Times()
        reviewer = AcceptWhenAsked(lambda: times.prepared)
        result, _ = await run_headless(
            repo, "add sub and mul", server.base_url, reviewer=reviewer, sink=times,
            pipeline=True,
        )  # fmt: skip
        assert result.exit_code == 0, result.message
        return len(server.chat_requests)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=20.0, help="seconds step 2's reply takes")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(
        {**GIT_IDENTITY, "OPENAI_API_KEY": "sk-bench", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    )
    with tempfile.TemporaryDirectory(prefix="tui-engineer-accept-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        waits = [await accept_to_commit(Path(tmp), args.latency) for _ in range(args.runs)]
        calls = await calls_with_one_fix(Path(tmp))
    shown = ", ".join(f"{w:.3f}" for w in waits)
    print(
        f"accept -> commit, step 2's model answering after {args.latency:g} s: {shown} s "
        f"(median {statistics.median(waits):.3f} s)"
    )
    print(f"model calls, a two-step session whose step 1 needs one fix: {calls}")


if __name__ == "__main__":
    asyncio.run(main())
