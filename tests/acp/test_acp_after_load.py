"""What an editor sees after `session/load`, and at any session's end, holds together: the plan
never goes backwards, every tool call id is new within the session (the told history's and the
live turn's), chat typed for one request never reaches a later one, and every tool call ends
`completed` or `failed` (an empty proposal, a run on the starting commit cut short)."""

from __future__ import annotations

from acp.schema import AgentPlanUpdate, ToolCallProgress, ToolCallStart

from tests.acp.acp_support import (
    RecordingClient,
    add_sub_and_mul,
    agent_session,
    cancel_while_held,
    loaded_session,
    session_cancelled_at,
    sub_then_mul,
)
from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import MUL, SUB, plan_reply
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session

RANK = {"pending": 0, "in_progress": 1, "completed": 2}


def backwards(client: RecordingClient) -> list[str]:
    """Plan entries whose status went back (completed -> pending, say), as the editor saw them."""
    seen: dict[int, str] = {}
    found = []
    for update in client.updates:
        if not isinstance(update, AgentPlanUpdate):
            continue
        for index, entry in enumerate(update.entries):
            before = seen.get(index)
            if before is not None and RANK[entry.status] < RANK[before]:
                found.append(f"{entry.content}: {before} -> {entry.status}")
            seen[index] = entry.status
    return found


def open_calls(client: RecordingClient) -> dict[str, str]:
    """Tool calls whose last status is neither completed nor failed: id -> that status."""
    status: dict[str, str] = {}
    for update in client.updates:
        if isinstance(update, ToolCallStart | ToolCallProgress) and update.status:
            status[update.tool_call_id] = update.status
        elif isinstance(update, ToolCallStart):
            status[update.tool_call_id] = "pending"
    return {call: s for call, s in status.items() if s not in {"completed", "failed"}}


def started_ids(client: RecordingClient) -> list[str]:
    return [u.tool_call_id for u in client.updates if isinstance(u, ToolCallStart)]


@whole_session
async def test_after_a_load_the_plan_never_goes_back_and_no_tool_call_id_comes_twice(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # Step 1 rejected once then committed; the agent stopped while the model worked on step 2.
    repo = make_repo()
    thinking = Gate()
    add_sub_and_mul(
        scripted_server,
        Reply(text="Again.\n\n" + SUB),
        Reply(text=MUL, hold=thinking),  # cut off by the cancel
        Reply(text="Adding mul.\n\n" + MUL),
    )
    answers = iter(["reject", "accept"])
    first = RecordingClient(policy=lambda call, options: next(answers))
    async with agent_session(tmp_path, scripted_server, repo, client=first) as (agent, session):
        await cancel_while_held(agent, session, "add sub and mul", thinking)
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, _):
        told = len(later.updates)
        assert await agent.prompt(session, "go on") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    live_plans = [u for u in later.updates[told:] if isinstance(u, AgentPlanUpdate)]
    assert live_plans and all(p.entries[0].status == "completed" for p in live_plans)
    assert backwards(later) == []
    assert later.plans()[-1] == [("1. Add sub", "completed"), ("2. Add mul", "completed")]
    ids = started_ids(later)
    assert len(ids) == len(set(ids)), ids
    # Step 2's new proposal is a tool call of its own, not step 1's rejected one told again.
    told_ids = {u.tool_call_id for u in later.updates[:told] if isinstance(u, ToolCallStart)}
    step_2 = [c for c in later.tool_calls("edit") if c.title.startswith("Step 2")]
    assert step_2[-1].tool_call_id not in told_ids
    assert open_calls(later) == {}


@whole_session
async def test_a_prompt_typed_after_a_load_never_reaches_a_later_request(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    sub_then_mul(scripted_server)
    async with session_cancelled_at(tmp_path, scripted_server, repo, 1) as (agent, session, first):
        assert await agent.prompt(session, "add sub") == "cancelled"

    later = RecordingClient()
    async with loaded_session(tmp_path, scripted_server, repo, session, later) as (agent, _):
        assert await agent.prompt(session, "Go on.") == "end_turn"  # step 1 shown again
        assert await agent.prompt(session, "done") == "end_turn"
        assert await agent.prompt(session, "add mul") == "end_turn"  # a new request

    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    plan_call = scripted_server.chat_requests[2]
    assert "add mul" in str(plan_call.messages)
    assert "Go on." not in str(plan_call.messages)
    assert "(Your message went to the model with its plan call.)" not in later.text()
    assert open_calls(later) == {}


NO_EDIT = "I looked at calc.py and I think it is fine as it is."


@whole_session
async def test_a_step_the_model_never_edits_leaves_no_tool_call_open(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # The model answers in prose only: nothing to commit. The suite on the starting commit is
    # slow, so the session is done before that run is.
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(3)\n"
    repo = make_repo({**SAMPLE_FILES, "tests/test_slow.py": slow})
    scripted_server.script(Reply(text=plan_reply("Add sub")), *[Reply(text=NO_EDIT)] * 4)
    client = RecordingClient()
    async with agent_session(
        tmp_path, scripted_server, repo, "--max-fix-attempts", "0", client=client
    ) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "--format=%s") == "initial"
    # Nothing to commit is not offered as an edit to accept.
    assert all(c.content for c in client.tool_calls("edit")), client.tool_calls("edit")
    assert all("accept" not in [o.option_id for o in asked] for asked in client.offered)
    assert open_calls(client) == {}
