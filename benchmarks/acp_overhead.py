"""Benchmark: `tui-engineer acp` against the same session headless.

1. Start-up: process start -> `initialize` answered, through the SDK's own client (target
   <= 0.5 s), and whether the agent process imported Textual (it must not: -X importtime).
2. Per step: the same scripted two-step session (real openai client over HTTP to the scripted
   server, real git and pytest, approval auto) run by `tui-engineer run --yes` and by an ACP
   client; each run record's plan -> last commit time, per step (target: ACP <= 5% over).
3. MCP servers: the same session over ACP with two MCP servers given in session/new (the
   glossary server of the tests, written with the MCP SDK, and the MCP project's time server
   from the package index), the model calling a tool in each step's propose call: time from
   session/new to the first plan entry (with none and with the two: the servers' start-up),
   and the tool-call rounds per session (model replies that called tools, each one a model
   call more).

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
from acp.schema import AgentPlanUpdate, McpServerStdio  # noqa: E402

from tests.acp.acp_support import RecordingClient, agent_command  # noqa: E402
from tests.conftest import GIT_IDENTITY, SAMPLE_FILES, write_files  # noqa: E402
from tests.engine_support import KEY, MUL, SUB, plan_reply  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402


def make_repo(folder: Path) -> Path:
    repo = folder / "repo"
    write_files(repo, SAMPLE_FILES)
    env = {**os.environ, **GIT_IDENTITY}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    return repo


def environment(home: Path) -> dict[str, str]:
    return {
        **os.environ, **GIT_IDENTITY, "OPENAI_API_KEY": KEY,
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


GLOSSARY = ROOT / "tests" / "mcp_glossary_server.py"


def two_servers() -> list[McpServerStdio]:
    time_server = Path(sys.executable).parent / "mcp-server-time"
    return [
        McpServerStdio(name="glossary", command=sys.executable, args=[str(GLOSSARY)], env=[]),
        McpServerStdio(name="time", command=str(time_server), args=[], env=[]),
    ]


class PlanClock(RecordingClient):
    """An editor that notes when the first plan entry arrives."""

    first_plan: float | None = None

    async def session_update(self, session_id: str, update: object, **kwargs: object) -> None:
        if isinstance(update, AgentPlanUpdate) and self.first_plan is None:
            self.first_plan = time.perf_counter()
        await super().session_update(session_id, update, **kwargs)


async def mcp_session(home: Path, servers: list[McpServerStdio]) -> tuple[float, int, float]:
    """(session/new -> first plan entry, tool-call rounds, whole session wall) over ACP."""
    repo = make_repo(home)
    command = agent_command()
    client = PlanClock()
    with ScriptedServer() as server:
        if servers:
            server.script(  # a tool round in each step's propose call, none in the plan's
                Reply(text=plan_reply("Add sub", "Add mul")),
                Reply(tool_calls=[("glossary__lookup_term", {"term": "sub"})]),
                Reply(text=SUB),
                Reply(tool_calls=[("time__get_current_time", {"timezone": "Etc/UTC"})]),
                Reply(text=MUL),
            )
        else:
            script(server)
        async with spawn_agent_process(
            client, command[0], *command[1:], "acp", "--base-url", server.base_url,
            "--model", "test-model", "--approval", "auto", env=environment(home), cwd=repo,
            transport_kwargs={"stderr": subprocess.DEVNULL},
        ) as (conn, _process):  # fmt: skip
            await conn.initialize(protocol_version=1)
            started = time.perf_counter()
            session = await conn.new_session(cwd=str(repo), mcp_servers=servers)
            await conn.prompt(session_id=session.session_id, prompt=[text_block("add sub and mul")])
            wall = time.perf_counter() - started
        rounds = sum(1 for r in server.chat_requests if r.messages[-1]["role"] == "tool")
    assert client.first_plan is not None
    return client.first_plan - started, rounds, wall


async def mcp_numbers(runs: int) -> None:
    plain, given = [], []
    for _ in range(runs):  # alternated, as above
        with tempfile.TemporaryDirectory() as tmp:
            plain.append(await mcp_session(Path(tmp), []))
        with tempfile.TemporaryDirectory() as tmp:
            given.append(await mcp_session(Path(tmp), two_servers()))
    print(f"MCP servers over ACP, median of {runs} (load {os.getloadavg()[0]:.1f}):")
    for name, numbers in (("no server", plain), ("two servers", given)):
        first = statistics.median(f for f, _, _ in numbers)
        spread = f"{min(f for f, _, _ in numbers):.2f}-{max(f for f, _, _ in numbers):.2f}"
        rounds = statistics.median(r for _, r, _ in numbers)
        wall = statistics.median(w for _, _, w in numbers)
        print(
            f"  {name}: session/new -> first plan entry {first:.2f} s ({spread}); "
            f"tool-call rounds per session {rounds:g}; session wall {wall:.2f} s"
        )


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
    await mcp_numbers(runs)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mcp-only", action="store_true", help="only part 3 (MCP servers)")
    arguments = parser.parse_args()
    asyncio.run(mcp_numbers(arguments.runs) if arguments.mcp_only else main(arguments.runs))
