"""Benchmark: a session against a local server run with its defaults (issue 21 §3).

llama-cpp-python's server with the tiny gemma3-270m model from the package index, `--n_ctx 4096`,
and nothing set in tui-engineer's config (no context_window): `tui-engineer run "add a sub
function" --yes` on the demo's sample repository, as a user runs it. That model cannot do the
work; what matters is how long the session takes to say so, and what it says. Before: the plan
call streamed for 197 s and 19,000 tokens, was continued into a window that could not hold it,
and failed with "connection cut … set context_window". Target: <= 60 s, one sentence.

Prints per run: the seconds from the command's start to its exit (the server's start-up is not
counted), the exit code, the session's last line, and the load average (the machine is shared:
a loaded one decodes several times slower). Needs the llama extra: pip install -e ".[llama]".
Run: python benchmarks/llama_defaults.py [--runs N] [--chat-format none|gemma] [--n-ctx 4096]
     [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llama_support import MODEL_PACKAGE, start_server, stop  # noqa: E402
from tests.llama_support import model_file as llama_model_file  # noqa: E402
from tui_engineer.demo.sample import make_sample_repo  # noqa: E402

REQUEST = "add a sub function"


def model_file() -> str:
    import importlib

    try:
        return llama_model_file(importlib.import_module(MODEL_PACKAGE))
    except ImportError:
        sys.exit("the llama extra is missing: pip install -e '.[llama]'")


def one_session(base_url: str, folder: Path) -> tuple[float, int, str]:
    """(seconds, exit code, the session's last line) of one headless run."""
    repo = make_sample_repo(folder)
    bin_dir = str(Path(sys.executable).parent)  # this environment's tui-engineer
    env = {**os.environ, "OPENAI_API_KEY": "local", "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    env.pop("TUI_ENGINEER_CONTEXT_WINDOW", None)  # all defaults
    command = ["tui-engineer", "run", REQUEST, "--yes", "--base-url", base_url, "--model", "gemma"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith(("Finished", "note:"))]
    return seconds, done.returncode, "\n    ".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument(
        "--chat-format", default="none", help="'none' (the default): the server's own"
    )
    parser.add_argument(
        "--keep", type=Path, help="keep each run's sample repo (and its run record) under KEEP"
    )
    args = parser.parse_args()
    fmt = None if args.chat_format == "none" else args.chat_format
    started = time.monotonic()
    server, base_url = start_server(model_file(), args.n_ctx, fmt)
    print(
        f"llama-cpp-python server, n_ctx {args.n_ctx}, chat format {args.chat_format}: up in "
        f"{time.monotonic() - started:.1f} s (not counted)"
    )
    times: list[float] = []
    try:
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory() as tmp:
                seconds, code, said = one_session(base_url, args.keep or Path(tmp))
            times.append(seconds)
            load = os.getloadavg()[0]
            print(f"run {run}: {seconds:.1f} s, exit {code}, load {load:.1f}\n    {said}")
    finally:
        stop(server)
    print(
        f"session to its end: best {min(times):.1f} s, worst {max(times):.1f} s "
        f"({len(times)} runs; target <= 60 s)"
    )


if __name__ == "__main__":
    main()
