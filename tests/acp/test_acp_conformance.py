"""Conformance: the whole two-step flow (plan, edit with its diff, tests, permission, accept, a
second step, `done`) run by clients that read the protocol differently, each to two commits. A
client's first rejected message is a failure (`running_agent` asserts none were; the older SDK
release's client exits 1 on it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION
from acp.schema import UsageUpdate

from tests.acp.acp_support import (
    READS_USAGE,
    SchemaCheck,
    agent_command,
    agent_env,
    running_agent,
    two_steps,
)
from tests.acp.stable_schema import StableSchemaCheck
from tests.conftest import git
from tests.scripted_server import ScriptedServer
from tests.tiers import whole_session


@whole_session
@pytest.mark.parametrize("stable", [True, False], ids=["stable-schema", "newest-sdk-opted-in"])
async def test_a_client_runs_the_two_step_flow_reading_only_what_it_knows(
    make_repo, scripted_server: ScriptedServer, tmp_path, stable: bool
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    check = StableSchemaCheck() if stable else SchemaCheck()
    async with running_agent(
        tmp_path, scripted_server.base_url, "--max-tokens", "200000", check=check
    ) as agent:
        if stable:  # an older client: a version and nothing else (no capabilities, no info)
            answer = await agent.conn.initialize(protocol_version=1)
        else:
            answer = await agent.conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=READS_USAGE
            )
        assert answer.protocol_version == 1
        made = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        assert await agent.prompt(made.session_id, "add sub and mul") == "end_turn"
        assert await agent.prompt(made.session_id, "done") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    client = agent.client
    assert [p.title.split("?")[0] for p in client.permissions] == [
        "Commit step 1: Add sub",
        "Commit step 2: Add mul",
    ]
    assert "Finished: 2 step(s) committed." in client.text()
    diffs = [c for call in client.tool_calls("edit") for c in call.content or []]
    assert any(getattr(d, "type", "") == "diff" for d in diffs)
    usage = [u for u in client.updates if isinstance(u, UsageUpdate)]
    # Only the client that said it reads usage gets it, all of it.
    assert (usage == []) if stable else (usage and usage[-1].size == 200000)


OLD_SDK = "agent-client-protocol==0.7.1"  # a release from before the usage_update proposal


def old_sdk_python(tmp_path: Path) -> Path:
    """A venv with the older SDK release from the package index (skipped when it cannot be
    installed here: no network)."""
    venv = tmp_path / "old-sdk"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    got = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", OLD_SDK],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if got.returncode != 0:
        pytest.skip(f"{OLD_SDK} could not be installed: {got.stderr[-300:]}")
    return python


# Slow tier: a venv with an older SDK release installed from the package index, then a whole
# session driven by that release's client in its own process.
@pytest.mark.slow
def test_a_client_on_an_older_sdk_release_runs_the_two_step_flow(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    python = old_sdk_python(tmp_path)
    repo = make_repo()
    two_steps(scripted_server)
    agent = [*agent_command(), "acp", "--base-url", scripted_server.base_url]
    agent += ["--model", "test-model", "--no-pipeline", "--max-tokens", "200000"]
    done = subprocess.run(
        [str(python), str(Path(__file__).parent / "clients" / "old_sdk_client.py"), str(repo),
         *agent],
        capture_output=True, text=True, env=agent_env(), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "protocol version 1" in done.stdout
    assert "add sub and mul -> end_turn" in done.stdout and "done -> end_turn" in done.stdout
    assert "Finished: 2 step(s) committed." in done.stdout
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
