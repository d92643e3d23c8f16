"""ACP clients nobody here wrote, each with its own JSON-RPC code, drive whole sessions against
the scripted server: chuk-acp's command-line client (one prompt; the approval mode auto, since it
answers no permission request) and acp-client's asyncio client (every step asked and accepted
through its permission handler). Both come with the dev extra; without them these skip."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.acp.acp_support import agent_command, agent_env, two_steps
from tests.conftest import git
from tests.scripted_server import ScriptedServer
from tests.tiers import whole_session


def agent_args(url: str, *more: str) -> list[str]:
    command = agent_command()
    return [*command, "acp", "--base-url", url, "--model", "test-model", "--no-pipeline", *more]


def acp_client_ready(server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """acp-client (skipped without it), with the model scripted for two steps and the agent's
    environment in this process's (acp-client starts the agent with it)."""
    acp_client = pytest.importorskip("acp_client", reason="acp-client (the dev extra has it)")
    two_steps(server)
    for name, value in agent_env().items():
        monkeypatch.setenv(name, value)
    return acp_client


@whole_session
def test_chuk_acp_command_line_client_drives_a_session(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    beside = Path(sys.executable).parent / "chuk-acp"
    client = str(beside) if beside.exists() else shutil.which("chuk-acp")
    if client is None:
        pytest.skip("chuk-acp is not installed (the dev extra has it)")
    repo = make_repo()
    two_steps(scripted_server)
    command, *args = agent_args(scripted_server.base_url, "--approval", "auto")
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"command": command, "args": args, "cwd": str(repo)}))
    done = subprocess.run(
        [client, "--config", str(config), "--interactive", "--prompt", "add sub and mul"],
        capture_output=True, text=True, env=agent_env(), cwd=repo, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert "Step 2 accepted: auto (tests passed)." in done.stdout
    assert "What is still wrong?" in done.stdout


@whole_session
async def test_acp_client_library_reviews_and_accepts_every_step(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    acp_client = acp_client_ready(scripted_server, monkeypatch)
    repo = make_repo()
    asked: list[dict] = []

    async def accept(request: dict) -> str:
        asked.append(request)
        return "accept"

    agent = acp_client.Agent(agent_args(scripted_server.base_url), repo, permission=accept)
    try:
        first = await agent.ask("add sub and mul")
        assert len(asked) == 2 and git(repo, "log", "-1", "--format=%s") == "Add mul"
        assert "What is still wrong?" in first
        last = await agent.ask("done")
        assert "Finished: 2 step(s) committed." in last
    finally:
        await agent.stop()
    titles = [r["toolCall"]["title"].split("?")[0] for r in asked]
    assert titles == ["Commit step 1: Add sub", "Commit step 2: Add mul"]
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]


# Slow tier: two whole agent processes (39 s at load 10). The quick tier loads a session in a
# new agent process through the SDK's client, schema-checked
# (test_acp_load.py::test_session_load_in_a_new_process_tells_the_session_and_goes_on), and
# this library's interop is the test above.
@pytest.mark.slow
async def test_acp_client_turns_a_step_down_and_carries_the_session_on_after_a_restart(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    acp_client = acp_client_ready(scripted_server, monkeypatch)
    repo = make_repo()

    async def step_1_only(request: dict) -> str | None:
        return "accept" if "step 1" in request["toolCall"]["title"] else None  # turned down

    agent = acp_client.Agent(agent_args(scripted_server.base_url), repo, permission=step_1_only)
    try:
        await agent.ask("add sub and mul")
        session = agent.session
    finally:
        await agent.stop()
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]

    async def accept(request: dict) -> str:
        return "accept"

    told: list[dict] = []
    again = acp_client.Agent(
        agent_args(scripted_server.base_url), repo, permission=accept, session=session
    )
    try:
        await again.start(on_update=told.append)
        assert again.session == session  # loaded, not new
        assert told[0] == {"sessionUpdate": "session_info_update", "title": "add sub and mul"}
        assert told[1] == {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "add sub and mul"},
        }
        await again.ask("go on")
    finally:
        await again.stop()
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    # One plan call; step 2's proposal shown again (its tests run again), no model call.
    assert len(scripted_server.chat_requests) == 3
