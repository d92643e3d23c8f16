"""The approval modes as ACP session modes: `auto` chosen in the editor's mode picker
(session/set_mode) commits a step whose tests pass unasked and still asks about a failing one."""

from __future__ import annotations

import pytest
from acp import RequestError

from tests.acp.acp_support import (
    RecordingClient,
    add_sub_and_mul,
    agent_session,
    cancel_while_held,
    loaded_session,
    running_agent,
)
from tests.conftest import git
from tests.engine_support import MUL_BUGGY, MUL_ON_SUB
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session


@whole_session
async def test_auto_mode_asks_only_about_the_failing_step(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    # Step 2 fails, and no fix is tried (--max-fix-attempts 0).
    add_sub_and_mul(scripted_server, Reply(text=MUL_BUGGY))
    client = RecordingClient(policy=lambda call, options: "skip")
    async with agent_session(
        tmp_path, scripted_server, repo, "--max-fix-attempts", "0", client=client
    ) as (agent, session):
        with pytest.raises(RequestError):
            await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.conn.set_session_mode(session_id=session, mode_id="auto")
        assert await agent.prompt(session, "add sub and mul") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert "Accepted: auto (tests passed)." in git(repo, "log", "-1", "--format=%B")
    assert [p.title.split("?")[0] for p in client.permissions] == ["Commit step 2: Add mul"]
    assert "Step 1 accepted: auto (tests passed)." in client.text()


@whole_session
async def test_the_approval_flag_is_the_starting_mode(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    async with running_agent(tmp_path, scripted_server.base_url, "--approval", "auto") as agent:
        await agent.conn.initialize(protocol_version=1)
        made = await agent.conn.new_session(cwd=str(make_repo()), mcp_servers=[])
        assert made.modes.current_mode_id == "auto"


@whole_session
async def test_auto_mode_stays_after_session_load(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # Auto chosen in the editor, step 1 committed unasked, the agent gone while the model
    # works on step 2: the editor reopens the thread in a new agent process.
    repo = make_repo()
    thinking = Gate()
    add_sub_and_mul(
        scripted_server,
        Reply(text=MUL_ON_SUB, hold=thinking),  # cut off with the agent
        Reply(text=MUL_ON_SUB),
    )
    async with agent_session(tmp_path, scripted_server, repo) as (agent, session):
        await agent.conn.set_session_mode(session_id=session, mode_id="auto")
        await cancel_while_held(agent, session, "add sub and mul", thinking)
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]

    later = RecordingClient(policy=lambda call, options: "reject")
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, loaded):
        assert loaded.modes.current_mode_id == "auto"
        assert await agent.prompt(session, "go on") == "end_turn"
    # Step 2 passed its tests: committed unasked, as auto does.
    assert later.permissions == []
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
