"""Benchmark: where the product's own time goes in a warm one-step session, phase by phase.

benchmarks/scale.py gives one session's own share per size, which moves by ±0.3 s from run to
run on a shared 2-core machine. This one keeps one generated repository (scale.py's), runs the
same one-step session on it again and again (reset to the starting commit after each), and
prints the median of each phase from the session's `--json` events:

- process start → session_started;
- session_started → the first model call;
- the model's first reply → the first test run started;
- the last test run finished → proposal_ready;
- decision → step_committed;
- step_committed → the process ended.

The test runs and the model's own time are left out: they are the user's. With two `--venv`
(for example the wheels of two commits, each installed without extras into a fresh venv:
`python -m venv DIR && DIR/bin/pip install dist/*.whl`), sessions alternate between them, each
with its own cache, so both see the same load. The first round (cold: no baseline known yet)
is not counted.

Run: python benchmarks/session_phases.py [--files 40000] [--rounds 8] [--venv DIR [--venv DIR]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import FIX, GIT_IDENTITY, REQUEST, make_repo  # noqa: E402

from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

# (name, from event, to event); None: the process's start, "exit": its end
PHASES = (
    ("process start → session started", None, "session_started"),
    ("→ first model call", "session_started", "model_call_started"),
    ("first reply → first test run", "model_exchange", "tests_started"),
    ("last run finished → proposal", "tests_finished", "proposal_ready"),
    ("decision → committed", "decision", "step_committed"),
    ("committed → process ended", "step_committed", "exit"),
)


def _times(stdout: str, started: float, ended: float) -> dict[str, float]:
    """Seconds from the start to each event's first occurrence (the last test run's end)."""
    at: dict[str, float] = {"exit": ended - started}
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind, when = event.get("type"), event.get("at")
        if not isinstance(kind, str) or when is None:
            continue
        if kind == "tests_finished" or kind not in at:
            at[kind] = when - started
    return at


def session(repo: Path, venv: Path | None, cache: Path) -> dict[str, float]:
    """One warm session's phases in seconds (a phase whose events did not happen is left out)."""
    env = {
        **os.environ, **GIT_IDENTITY,
        "OPENAI_API_KEY": "sk-benchmark", "XDG_CACHE_HOME": str(cache),
    }  # fmt: skip
    if venv is not None:
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    with ScriptedServer() as server:
        server.script(*[Reply(text=FIX)] * 4)
        command = [
            *("tui-engineer", "run", REQUEST, "--yes", "--no-plan", "--json"),
            *("--base-url", server.base_url, "--model", "test-model", "--no-record"),
        ]
        started = time.time()
        done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True)
        ended = time.time()
    subprocess.run(["git", "reset", "-q", "--hard", "HEAD~1"], cwd=repo, check=True)
    if done.returncode != 0:
        raise SystemExit(f"the session failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    at = _times(done.stdout, started, ended)
    phases = {
        name: at[end] - (at[start] if start else 0.0)
        for name, start, end in PHASES
        if (start is None or start in at) and end in at
    }
    phases["these phases in all"] = sum(phases.values())
    return phases


def _median(rows: list[dict[str, float]], phase: str) -> float:
    return statistics.median(row[phase] for row in rows if phase in row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=40_000, help="the repository's size")
    parser.add_argument("--rounds", type=int, default=8, help="warm sessions counted per install")
    parser.add_argument(
        "--venv", type=Path, action="append", default=[],
        help="a virtual environment whose tui-engineer runs (twice: alternate two)",
    )  # fmt: skip
    args = parser.parse_args()
    installs: list[Path | None] = [v.resolve() for v in args.venv] or [None]
    names = [str(v) if v else "this checkout" for v in installs]
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory(prefix="tui-phases-") as tmp:
        repo = make_repo(Path(tmp), args.files)
        for round_ in range(args.rounds + 1):
            for index, (name, venv) in enumerate(zip(names, installs, strict=True)):
                phases = session(repo, venv, Path(tmp) / f"cache{index}")
                if round_:  # the first is cold
                    seen[name].append(phases)
            print(f"round {round_} done", flush=True)
    print(f"\nload {os.getloadavg()[0]:.1f}, {args.files:,} files, median of {args.rounds}")
    print("| phase | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for phase in [p[0] for p in PHASES] + ["these phases in all"]:
        cells = [f"{_median(rows, phase):.3f} s" for rows in seen.values()]
        print(f"| {phase} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
