"""Benchmark: tui-engineer and aider side by side on the same scripted tasks.

Both tools run as command-line subprocesses against the same scripted OpenAI-compatible server
(tests/scripted_server.py), in a fresh copy of the same small repository, with the same test
command, and end with the change committed:

- one edit: add a function (its test passes at once);
- fail then fix: the first edit is wrong, the tests fail, the second edit fixes it.

aider is installed by this script into its own virtualenv under the user cache
(`~/.cache/tui-engineer-bench/aider-venv`, once; needs the package index). Printed per tool and
task: wall time, peak memory of the whole process tree (children included: the test runs), model
calls and prompt bytes sent; then the ratios. Targets: tui-engineer's wall time ≤ 0.25× aider's,
peak memory ≤ 0.5×.

The runs alternate (ours, aider's, ours, …) so that a change in the machine's load reaches both
tools alike; the medians are printed, with the CPU time (user + system, test runs included: those
under bubblewrap, which getrusage does not count, are sampled from /proc every 10 ms), which
a loaded machine changes less than the wall time. `--test-cmd` runs another test command in both
(e.g. one that does not load the pytest plugins installed beside tui-engineer).

Run: python benchmarks/aider_side_by_side.py [--runs 3] [--test-cmd CMD]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import platformdirs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import GIT_IDENTITY  # noqa: E402
from tests.engine_support import edit  # noqa: E402
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer  # noqa: E402

FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_sub():\n    from calc import sub\n    assert sub(5, 3) == 2\n"
    ),
}
REQUEST = "Add a sub(a, b) function to calc.py that returns a - b."
ADD = "    return a + b\n"
GOOD = edit("calc.py", ADD, ADD + "\n\ndef sub(a, b):\n    return a - b\n")
BAD = edit("calc.py", ADD, ADD + "\n\ndef sub(a, b):\n    return b - a\n")
FIX = edit("calc.py", "    return b - a\n", "    return a - b\n")
DIAGNOSIS = "sub returns b - a; it must return a - b."
TASKS = {
    # Per tool, the replies in the order it asks for them (tui-engineer diagnoses in a separate
    # call; aider sends the test output straight to its fix call).
    "one edit": {"tui-engineer": [GOOD], "aider": [GOOD]},
    "fail then fix": {"tui-engineer": [BAD, DIAGNOSIS, FIX], "aider": [BAD, FIX]},
}
OURS_FLAGS: list[str] = []  # --ours-flag adds to it


def aider_program() -> Path:
    """aider in its own virtualenv (installed on first use)."""
    venv = platformdirs.user_cache_path("tui-engineer-bench") / "aider-venv"
    program = venv / "bin" / "aider"
    if not program.exists():
        print(f"installing aider-chat into {venv} (once)…", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "aider-chat"]
        subprocess.run(pip, check=True)
    return program


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / ".gitignore").write_text(".aider*\n.tui-engineer/\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **GIT_IDENTITY})
    return repo


class TreeMemory:
    """Samples the summed resident memory of a process and all its descendants, and the CPU
    time of the processes under a bubblewrap sandbox: `getrusage(RUSAGE_CHILDREN)` never counts
    those (tui-engineer's test runs), so without this its CPU time leaves out the tests."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak = 0
        self._sandboxed: dict[tuple[int, str], float] = {}  # (pid, start time) -> CPU seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def sandboxed_cpu(self) -> float:
        """User + system seconds of processes seen under bwrap (sampled every 10 ms)."""
        return sum(self._sandboxed.values())

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            tree = _tree(self.pid)
            self.peak = max(self.peak, sum(_rss(p) for p, _ in tree))
            for pid, sandboxed in tree:
                if sandboxed and (cpu := _cpu(pid)) is not None:
                    key, seconds = cpu
                    self._sandboxed[(pid, key)] = max(seconds, self._sandboxed.get((pid, key), 0))
            time.sleep(0.01)


def _tree(root: int) -> list[tuple[int, bool]]:
    """The process and its descendants, each with whether a `bwrap` process is above it."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            names[int(entry)] = stat[stat.find("(") + 1 : stat.rfind(")")]
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found: list[tuple[int, bool]] = []
    todo = [(root, False)]
    while todo:
        pid, under = todo.pop()
        found.append((pid, under))
        below = under or names.get(pid) == "bwrap"
        todo.extend((child, below) for child in children.get(pid, []))
    return found


_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> tuple[str, float] | None:
    """(start time, user + system seconds) of one process, or None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[19], (int(fields[11]) + int(fields[12])) / _TICKS


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def responder(replies: list[str]):
    """Answers commit-message requests (aider's weak-model call) with a title, and every other
    request with the next scripted reply."""
    queue = list(replies)

    def answer(request: RecordedRequest) -> Reply:
        system = str(request.messages[0].get("content", "")) if request.messages else ""
        if "commit message" in system.lower():
            return Reply(text="Add sub")
        return Reply(text=queue.pop(0) if queue else "Done.")

    return answer


def command(tool: str, base_url: str, test_cmd: str) -> list[str]:
    if tool == "tui-engineer":
        return [
            sys.executable, "-m", "tui_engineer", "run", REQUEST, "--yes", "--no-plan",
            "--base-url", base_url, "--model", "test-model", "--test-cmd", test_cmd, "--no-record",
            *OURS_FLAGS,
        ]  # fmt: skip
    return [
        str(aider_program()), "--model", "openai/test-model", "--weak-model", "openai/test-model",
        "--openai-api-base", base_url, "--edit-format", "diff", "--message", REQUEST,
        "--yes-always", "--auto-commits", "--auto-test", "--test-cmd", test_cmd,
        "--map-tokens", "0", "--no-check-update", "--no-show-release-notes",
        "--analytics-disable", "--no-show-model-warnings", "--no-pretty", "--no-fancy-input",
        "--no-gitignore", "--no-detect-urls", "calc.py", "tests/test_calc.py",
    ]  # fmt: skip


@dataclass
class Measured:
    wall: float
    peak: int
    calls: int
    prompt_bytes: int
    committed: bool
    cpu: float = 0.0  # user + system seconds of the tool and its children


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(tool: str, replies: list[str], test_cmd: str) -> Measured:
    with tempfile.TemporaryDirectory(prefix="tui-bench-") as tmp, ScriptedServer() as server:
        repo = make_repo(Path(tmp))
        server.script(*([responder(replies)] * 20))
        env = {
            **os.environ,
            **GIT_IDENTITY,
            "OPENAI_API_KEY": "sk-benchmark",
            "HOME": tmp,  # aider keeps history and caches under ~
            "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of litellm's price list
        }
        cpu_before = _children_cpu()
        started = time.perf_counter()
        proc = subprocess.Popen(
            command(tool, server.base_url, test_cmd),
            cwd=repo, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        with TreeMemory(proc.pid) as memory:
            output = proc.communicate(timeout=600)[0]
        wall = time.perf_counter() - started
        cpu = _children_cpu() - cpu_before + memory.sandboxed_cpu
        log = subprocess.run(
            ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout
        committed = "a - b" in (repo / "calc.py").read_text() and len(log.splitlines()) >= 2
        if not committed:
            print(output.decode(errors="replace")[-3000:])
        requests = server.chat_requests
        prompt_bytes = sum(len(json.dumps(r.messages)) for r in requests)
        return Measured(wall, memory.peak, len(requests), prompt_bytes, committed, cpu)


def median_of(done: list[Measured]) -> Measured:
    return Measured(
        statistics.median(m.wall for m in done),
        int(statistics.median(m.peak for m in done)),
        done[-1].calls,
        done[-1].prompt_bytes,
        all(m.committed for m in done),
        statistics.median(m.cpu for m in done),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--ours-flag", action="append", default=[], help="extra tui-engineer flag (repeatable)"
    )
    parser.add_argument("--test-cmd", default=f"{sys.executable} -m pytest -q")
    args = parser.parse_args()
    OURS_FLAGS.extend(args.ours_flag)
    aider_program()
    if shutil.which("git") is None:
        sys.exit("git is needed")
    print(f"test command: {args.test_cmd}")
    for task, per_tool in TASKS.items():
        print(f"{task} (median of {args.runs}):")
        done: dict[str, list[Measured]] = {tool: [] for tool in per_tool}
        for _ in range(args.runs):
            for tool, replies in per_tool.items():
                done[tool].append(run_once(tool, replies, args.test_cmd))
        results = {tool: median_of(runs) for tool, runs in done.items()}
        for tool, m in results.items():
            walls = ", ".join(f"{r.wall:.2f}" for r in done[tool])
            state = "committed" if m.committed else "NOT COMMITTED"
            print(
                f"  {tool:<13} wall {m.wall:6.2f} s ({walls})   cpu {m.cpu:5.2f} s   "
                f"peak memory {m.peak / 2**20:6.1f} MiB   model calls {m.calls}   "
                f"prompt bytes {m.prompt_bytes:,}   {state}"
            )
        ours, theirs = results["tui-engineer"], results["aider"]
        print(
            f"  ratio (tui-engineer / aider): wall {ours.wall / theirs.wall:.2f} (target ≤ 0.25),"
            f" cpu {ours.cpu / theirs.cpu:.2f},"
            f" peak memory {ours.peak / theirs.peak:.2f} (target ≤ 0.5),"
            f" prompt bytes {ours.prompt_bytes / theirs.prompt_bytes:.2f}"
        )


if __name__ == "__main__":
    main()
