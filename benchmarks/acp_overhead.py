"""Benchmark: `tui-engineer acp` against the same session headless.

1. Start-up: process start -> `initialize` answered, through the SDK's own client (target
   <= 0.5 s), and whether the agent process imported Textual (it must not: -X importtime).
2. Per step: the same scripted two-step session (real openai client over HTTP to the scripted
   server, real git and pytest, approval auto) run by `tui-engineer run --yes` and by an ACP
   client; each run record's plan -> last commit time, per step (target: ACP <= 5% over).

Run: python benchmarks/acp_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp import spawn_agent_process, text_block  # noqa: E402

from tests.acp.acp_support import RecordingClient, agent_command  # noqa: E402
from tests.engine_support import KEY, MUL, SUB, plan_reply  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

FILES = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = {**os.environ, **GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


def environment(home: Path) -> dict[str, str]:
    return {
        **os.environ, **GIT_ENV, "OPENAI_API_KEY": KEY,
        "XDG_CACHE_HOME": str(home / "cache"), "XDG_CONFIG_HOME": str(home / "config"),
    }  # fmt: skip


def script(server: ScriptedServer) -> None:
    server.script(Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), Reply(text=MUL))


def per_step(repo: Path) -> float:
    """From the run record: plan ready -> last commit, per committed step."""
    (record,) = (repo / ".tui-engineer" / "runs").glob("*.jsonl")
    events = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    planned = next(e["at"] for e in events if e["type"] == "plan_ready")
    commits = [e["at"] for e in events if e["type"] == "step_committed"]
    assert len(commits) == 2, f"{len(commits)} commits in {record}"
    return (commits[-1] - planned) / len(commits)


async def start_up(home: Path, url: str) -> tuple[float, float]:
    """(wall seconds, the agent's CPU seconds) from process start to initialize answered. On a
    loaded machine the CPU time is the steadier number."""
    command = agent_command()
    started = time.perf_counter()
    async with spawn_agent_process(
        RecordingClient(), command[0], *command[1:], "acp", "--base-url", url,
        env=environment(home), transport_kwargs={"stderr": subprocess.DEVNULL},
    ) as (conn, process):  # fmt: skip
        await conn.initialize(protocol_version=1)
        wall = time.perf_counter() - started
        return wall, cpu_seconds(process.pid)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def textual_imported(home: Path, url: str) -> bool:
    """Whether the agent process imported Textual before answering initialize."""
    log = home / "importtime.txt"
    env = {**environment(home), "PYTHONPROFILEIMPORTTIME": "1"}
    command = [*agent_command(), "acp", "--base-url", url]
    hello = '{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}'
    with log.open("w") as err:
        subprocess.run(command, input=hello + "\n", stdout=subprocess.DEVNULL, stderr=err,
                       env=env, text=True, timeout=60)  # fmt: skip
    return any(line.rstrip().endswith(("| textual", "|   textual")) for line in log.open())


def children_cpu() -> float:
    """CPU seconds of every finished child process tree (the session's process and its git,
    pytest and bwrap children alike)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def headless_session(home: Path) -> tuple[float, float]:
    repo = make_repo(home)
    before = children_cpu()
    with ScriptedServer() as server:
        script(server)
        command = [*agent_command(), "run", "add sub and mul", "--yes", "--base-url"]
        command += [server.base_url, "--model", "test-model"]
        done = subprocess.run(command, cwd=repo, env=environment(home), capture_output=True,
                              text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    return per_step(repo), children_cpu() - before


async def acp_session(home: Path) -> tuple[float, float]:
    repo = make_repo(home)
    command = agent_command()
    before = children_cpu()
    with ScriptedServer() as server:
        script(server)
        async with spawn_agent_process(
            RecordingClient(), command[0], *command[1:], "acp", "--base-url", server.base_url,
            "--model", "test-model", "--approval", "auto", env=environment(home), cwd=repo,
            transport_kwargs={"stderr": subprocess.DEVNULL},
        ) as (conn, _process):  # fmt: skip
            await conn.initialize(protocol_version=1)
            session = await conn.new_session(cwd=str(repo), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=[text_block("add sub and mul")])
    return per_step(repo), children_cpu() - before


async def main(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as idle:
        home = Path(tmp)
        timed = [await start_up(home, idle.base_url) for _ in range(runs + 1)][1:]  # warm cache
        textual = textual_imported(home, idle.base_url)
    starts, cpu = [w for w, _ in timed], [c for _, c in timed]
    print(f"acp start-up (process start -> initialize answered), {runs} runs:")
    print(f"  wall: median {statistics.median(starts):.3f} s, min {min(starts):.3f} s, "
          f"max {max(starts):.3f} s (target <= 0.5 s)")  # fmt: skip
    print(f"  the agent's CPU time: median {statistics.median(cpu):.3f} s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    print(f"  Textual imported: {'YES' if textual else 'no'}")
    headless, over_acp = [], []
    for n in range(runs):  # alternated, so load on the machine falls on both alike
        with tempfile.TemporaryDirectory() as tmp:
            headless.append(headless_session(Path(tmp)))
        with tempfile.TemporaryDirectory() as tmp:
            over_acp.append(await acp_session(Path(tmp)))
        (hs, hc), (as_, ac) = headless[-1], over_acp[-1]
        print(f"  run {n + 1}: per step headless {hs:.3f} s, acp {as_:.3f} s; "
              f"session CPU headless {hc:.2f} s, acp {ac:.2f} s")  # fmt: skip
    h = statistics.median(s for s, _ in headless)
    a = statistics.median(s for s, _ in over_acp)
    hc = statistics.median(c for _, c in headless)
    ac = statistics.median(c for _, c in over_acp)
    print(f"per step (plan ready -> last commit / steps), median of {runs}:")
    print(f"  headless {h:.3f} s, acp {a:.3f} s: acp overhead {100 * (a - h) / h:+.1f}% "
          "(target <= 5%)")  # fmt: skip
    print("whole session's CPU (the process and its children: git, pytest, bwrap), median:")
    print(f"  headless {hc:.2f} s, acp {ac:.2f} s ({ac - hc:+.2f} s, start-up included)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
