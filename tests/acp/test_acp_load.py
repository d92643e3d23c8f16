"""Sessions that outlive a turn and a process: a cancel's next prompt goes on with the stopped
session (its step takes the prompt in as chat; no new plan), and session/load in a new agent
process tells the recorded session again, then goes on with it where it stopped."""

from __future__ import annotations

import asyncio

import pytest
from acp import RequestError
from acp.schema import SessionInfoUpdate, ToolCallStart, UserMessageChunk

from tests.acp.acp_support import (
    RecordingClient,
    add_sub_and_mul,
    agent_session,
    cancel_while_held,
    loaded_session,
    review_cancelled,
    running_agent,
    session_cancelled_at,
    sub_then_mul,
)
from tests.conftest import git
from tests.engine_support import MUL, SUB, plan_reply
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session


@whole_session
async def test_a_prompt_after_a_cancel_goes_on_with_the_step_as_chat(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # The chat a user sends while the model works: the editor cancels the turn, then prompts.
    repo = make_repo()
    thinking = Gate()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB, hold=thinking),  # cut off by the cancel
        Reply(text="Subtracting, as asked.\n\n" + SUB),
    )
    client = RecordingClient()
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        await cancel_while_held(agent, session, "add sub", thinking)
        assert git(repo, "log", "--format=%s") == "initial"
        assert await agent.prompt(session, "keep it to subtraction") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert len(scripted_server.chat_requests) == 3  # one plan call only: the session went on
    assert "keep it to subtraction" in str(scripted_server.chat_requests[2].messages)
    assert "Subtracting, as asked." in client.text()


@whole_session
async def test_a_prompt_after_a_cancel_at_a_review_shows_that_proposal_again(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    async with review_cancelled(tmp_path, scripted_server, repo) as (agent, session, client):
        client.policy = lambda call, options: "accept"
        assert await agent.prompt(session, "go on") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert len(scripted_server.chat_requests) == 2  # shown again: its tests rerun, no model call
    assert len(client.permissions) == 2


@whole_session
async def test_session_load_in_a_new_process_tells_the_session_and_goes_on(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text="Adding sub.\n\n" + SUB),
        Reply(text=MUL),
    )
    async with session_cancelled_at(tmp_path, scripted_server, repo, 2) as (agent, session, first):
        assert await agent.prompt(session, "add sub and mul") == "cancelled"
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, loaded):
        assert loaded.modes.current_mode_id == "ask"
        # Told again before the answer: the request, the plan, step 1's diff and tests, and
        # its commit; step 2's review, cut off, closed as such.
        told = [u for u in later.updates if not isinstance(u, SessionInfoUpdate)]
        assert isinstance(told[0], UserMessageChunk) and told[0].content.text == "add sub and mul"
        assert "Adding sub." in later.text() and "Committed" in later.text()
        assert later.plans()[-1][0] == ("1. Add sub", "completed")
        edits = [u for u in told if isinstance(u, ToolCallStart) and u.kind == "edit"]
        assert len(edits) == 2 and "+def sub(a, b):" in edits[0].content[0].content.text
        assert later.progress(edits[1].tool_call_id)[-1].status == "failed"
        assert later.tool_calls("execute")
        # Then it goes on: step 2's proposal shown again (its tests run again), no model call.
        assert await agent.prompt(session, "go on") == "end_turn"
        assert [p.title.split("?")[0] for p in later.permissions] == ["Commit step 2: Add mul"]

    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert len(scripted_server.chat_requests) == 3


@whole_session
async def test_loading_an_unknown_session_is_an_error_and_the_agent_keeps_serving(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    async with running_agent(tmp_path, scripted_server.base_url) as agent:
        await agent.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError, match="tui-engineer runs"):
            await agent.conn.load_session(cwd=str(repo), session_id="nope", mcp_servers=[])
        with pytest.raises(RequestError, match="No recorded session"):
            await agent.conn.load_session(cwd=str(repo), session_id="../x.jsonl", mcp_servers=[])
        assert await asyncio.wait_for(agent.start(repo), 60)


@whole_session
async def test_kill_9_at_a_permission_request_loses_nothing_and_load_goes_on(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    add_sub_and_mul(scripted_server, Reply(text=MUL))
    box: list = []

    async def kill_at_step_2(call, options):
        if call.title.startswith("Commit step 2:"):
            box[0].process.kill()  # SIGKILL: no finally runs in the agent
            await asyncio.sleep(30)
        return "accept"

    client = RecordingClient(policy=kill_at_step_2)
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        box.append(agent)
        with pytest.raises(ConnectionError):
            await agent.prompt(session, "add sub and mul")
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert git(repo, "status", "--porcelain") == ""

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, _):
        assert await agent.prompt(session, "go on") == "end_turn"
        assert f"removed leftover worktree from session {session}" in later.text()
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]


@whole_session
async def test_loading_a_finished_session_tells_it_and_the_next_prompt_starts_anew(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    sub_then_mul(scripted_server)
    async with agent_session(tmp_path, scripted_server, repo) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, _):
        assert later.updates[0].title == "add sub"
        assert later.updates[1].content.text == "add sub"
        assert "Session ended (done)" in later.text()
        assert await agent.prompt(session, "add mul") == "end_turn"
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert "add mul" in str(scripted_server.chat_requests[2].messages)  # a new plan


@whole_session
async def test_loading_a_session_tells_every_request_made_in_it_and_goes_on_with_the_last(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # Two requests in one editor session: the second, after the first was done, is an engine
    # session of its own (its own run record). Loading the editor's session tells both.
    repo = make_repo()
    sub_then_mul(scripted_server)
    async with agent_session(tmp_path, scripted_server, repo) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"
        assert await agent.prompt(session, "add mul") == "end_turn"  # at "what is still wrong?"
    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, _):
        said = [u.content.text for u in later.updates if isinstance(u, UserMessageChunk)]
        assert said[:1] == ["add sub"] and "add mul" in said
        assert [entry for plan in later.plans() for entry, _ in plan][-1] == "1. Add mul"
        assert "Add sub" in later.text() and "Add mul" in later.text()  # both commits told
        # It goes on with the last request where it stopped: the answer ends it, no model call.
        assert await agent.prompt(session, "done") == "end_turn"
        assert "Finished" in later.text()
    assert len(scripted_server.chat_requests) == 4
