"""Benchmark: independent steps prepared side by side (`parallel_steps`), on the small calc
repository with a real pytest suite, a scripted model that answers each call after
`--model-seconds` (default 20, as a real model) and a reader who takes `--read-seconds` per
review (default 10) before accepting.

Two five-step plans: "independent", step 1 changes calc.py and steps 2–5 each add a module of
their own (none waits for another); "chained", each step reads what the one before writes (no
step can be prepared before the one before it is proposed). For `parallel_steps` 1, 2 and 3
it prints the human's wait after each accept (accept → the next proposal on screen), the
session's wall time beside the physical limit (the first proposal, then nothing but reading),
and the model calls per session. Targets (issue 35): independent with 3, every wait after the
first review ≤ 1 s and the wall within 10% of the limit; chained, no more than 2% slower than 1.

Run: python benchmarks/step_graph.py [--model-seconds 20] [--read-seconds 10]
     (a quick look: --model-seconds 2 --read-seconds 1)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import SAMPLE_FILES, git, write_files  # noqa: E402
from tests.engine_support import SUB, ReadingReviewer, create, run_headless  # noqa: E402
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402

NAMES = ["double", "triple", "square", "halve"]  # steps 2–5: one module each


def steps(chained: bool) -> list[dict]:
    """The plan: step 1 adds sub to calc.py; each later step adds a module (chained: it reads
    the file the step before writes)."""
    plan = [{"title": "Add sub", "files": ["calc.py"]}]
    before = "calc.py"
    for name in NAMES:
        step = {"title": f"Add {name}", "files": [f"{name}.py", f"tests/test_{name}.py"]}
        if chained:
            step["reads"] = [before]
        plan.append(step)
        before = f"{name}.py"
    return [{"description": s["title"], "verify": "pytest", **s} for s in plan]


def module(name: str) -> str:
    body = {"double": "2 * a", "triple": "3 * a", "square": "a * a", "halve": "a / 2"}[name]
    expected = {"double": 6, "triple": 9, "square": 9, "halve": 1.5}[name]
    code = f"def {name}(a):\n    return {body}\n"
    test = f"from {name} import {name}\n\n\ndef test_{name}():\n"
    test += f"    assert {name}(3) == {expected}\n"
    return create(f"{name}.py", code) + create(f"tests/test_{name}.py", test)


class Model:
    """Answers each call after `seconds`, from the script of the step it is about (calls of
    steps prepared side by side arrive in any order)."""

    def __init__(self, server: ScriptedServer, plan: list[dict], seconds: float) -> None:
        text = "Here is my plan.\n\n```json\n" + json.dumps({"steps": plan}) + "\n```\n"
        self.replies = {1: deque([SUB])} | {
            k: deque([module(name)]) for k, name in enumerate(NAMES, start=2)
        }
        self.plan = deque([text])
        self.seconds = seconds
        server.script(*([self.answer] * (1 + len(plan))))

    def answer(self, request: RecordedRequest) -> Reply:
        found = re.search(r"Now do step (\d+)", json.dumps(request.messages))
        queue = self.plan if found is None else self.replies[int(found.group(1))]
        return Reply(text=queue.popleft(), delay=self.seconds)


async def session(work: Path, chained: bool, parallel: int, args: argparse.Namespace) -> dict:
    """One session: the waits after each accept, the wall time, the time to the first
    proposal, and the model calls."""
    repo = work / f"repo-{'chained' if chained else 'independent'}-{parallel}"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, SAMPLE_FILES)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    stamps: list[tuple[float, ev.Event]] = []
    with ScriptedServer() as server:
        Model(server, steps(chained), args.model_seconds)
        started = time.perf_counter()
        reader = ReadingReviewer(args.read_seconds)
        result, _ = await run_headless(
            repo, "add sub and four helpers", server.base_url, reviewer=reader,
            sink=lambda e: stamps.append((time.perf_counter(), e)),
            test_command=f"{sys.executable} -m pytest -q", pipeline=True, parallel_steps=parallel,
        )  # fmt: skip
        wall = time.perf_counter() - started
        calls = len(server.chat_requests)
    assert result.exit_code == 0, result.message
    accepted = {e.step: t for t, e in stamps if isinstance(e, ev.DecisionMade)}
    ready = {e.step: t for t, e in stamps if isinstance(e, ev.ProposalReady)}
    waits = [ready[k] - accepted[k - 1] for k in sorted(ready) if k - 1 in accepted]
    first = ready[1] - started
    return {"waits": waits, "wall": wall, "first": first, "calls": calls}


def line(label: str, run: dict, read: float) -> str:
    limit = run["first"] + 5 * read
    waits = ", ".join(f"{w:.2f}" for w in run["waits"])
    over = 100 * (run["wall"] / limit - 1)
    return (
        f"  {label:<16} waits after each accept: {waits} s | wall {run['wall']:.1f} s, "
        f"limit {limit:.1f} s ({over:+.0f}%) | model calls {run['calls']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model-seconds", type=float, default=20.0)
    parser.add_argument("--read-seconds", type=float, default=10.0)
    parser.add_argument("--parallel", default="1,2,3", help="parallel_steps values to compare")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    values = [int(v) for v in args.parallel.split(",")]
    print(
        f"five steps; the model answers after {args.model_seconds:g} s, the reader reads "
        f"{args.read_seconds:g} s per review; limit = first proposal + 5 reads"
    )
    with tempfile.TemporaryDirectory(prefix="tui-step-graph-") as tmp:
        for chained in (False, True):
            print("chained (each step reads the one before):" if chained else
                  "independent (steps 2-5 wait for no step):")  # fmt: skip
            walls = {}
            for parallel in values:
                os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / f"cache-{chained}-{parallel}")
                run = asyncio.run(session(Path(tmp), chained, parallel, args))
                walls[parallel] = run["wall"]
                print(line(f"parallel_steps {parallel}", run, args.read_seconds))
            if chained and 1 in walls:
                beside = ", ".join(
                    f"{v}: {100 * (walls[v] / walls[1] - 1):+.1f}%" for v in values if v != 1
                )
                print(f"  chained, wall beside parallel_steps 1 (target ≤ +2%): {beside}")


if __name__ == "__main__":
    main()
