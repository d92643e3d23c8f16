"""Reviews from the editor that do not accept: every proposal rejected (the turn ends by itself,
nothing committed) and a cancel while a permission request is open (the step stops at once, no
process of it is left, the prompt answers cancelled)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.acp.acp_support import (
    RecordingClient,
    add_sub,
    add_sub_and_mul,
    agent_session,
    descendants,
)
from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import MUL, SUB, edit, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session


@whole_session
async def test_every_proposal_rejected_ends_the_turn_with_nothing_committed(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        *[Reply(text=f"Attempt {n}.\n\n" + SUB) for n in (1, 2, 3)],
    )
    client = RecordingClient(policy=lambda call, options: "reject")
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"

    assert git(repo, "log", "--format=%s") == "initial"
    assert (repo / "calc.py").read_text() == SAMPLE_FILES["calc.py"]
    assert len(client.permissions) == 3  # three proposals, then the step is given up
    assert client.plans()[-1] == [("1. Add sub (skipped: rejected 3 times)", "completed")]
    # The model heard each rejection.
    assert "rejected in the editor" in str(scripted_server.chat_requests[2].messages)
    edits = client.tool_calls("edit")
    assert [client.progress(e.tool_call_id)[-1].status for e in edits] == ["failed"] * 3
    assert "What is still wrong?" in client.text()


SLOW_TEST = "\n\ndef test_slow():\n    import time\n    time.sleep(120)\n"


@whole_session
async def test_cancel_at_a_permission_request_stops_everything_at_once(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    # Step 2 is prepared while step 1 waits for the editor (the pipeline): its suite hangs.
    add_sub_and_mul(scripted_server, Reply(text=MUL + edit("tests/test_calc.py",
        "    assert add(2, 3) == 5\n", "    assert add(2, 3) == 5" + SLOW_TEST)))  # fmt: skip
    asked = asyncio.Event()
    never = asyncio.Event()

    async def wait_forever(call, options):
        asked.set()
        await never.wait()

    client = RecordingClient(policy=wait_forever)
    async with agent_session(tmp_path, scripted_server, repo, client=client, pipeline=True) as (
        agent,
        session,
    ):
        turn = asyncio.ensure_future(agent.prompt(session, "add sub and mul"))
        await asyncio.wait_for(asked.wait(), 60)
        for _ in range(300):  # step 2's tests started, behind the review
            if any("test_slow" in c or "pytest" in c for _, c in descendants(agent.process.pid)):
                break
            await asyncio.sleep(0.1)
        assert any("pytest" in c for _, c in descendants(agent.process.pid))
        await agent.conn.cancel(session_id=session)
        assert await asyncio.wait_for(turn, 30) == "cancelled"
        assert descendants(agent.process.pid) == []
        assert git(repo, "log", "--format=%s") == "initial"
        assert git(repo, "status", "--porcelain") == ""
        # Its shadows are gone (the per-repo folder with them), and the agent keeps serving.
        shadows = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
        assert list(shadows.glob("*/*")) == []
        assert await agent.conn.new_session(cwd=str(repo), mcp_servers=[])


@whole_session
async def test_an_accept_your_hook_refuses_is_asked_again_and_commits_once_fixed(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    from tests.headless.test_accept_refused import refusing_hook

    repo = make_repo()
    block = refusing_hook(repo, "pre-commit", "lint: calc.py: line too long")
    add_sub(scripted_server)

    def accept_then_fix(call, options) -> str:
        if block.exists() and len(client.permissions) == 2:
            block.unlink()  # the user fixed the lint, then accepts again
        return "accept"

    client = RecordingClient(policy=accept_then_fix)
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert len(client.permissions) == 2  # the same proposal asked about again
    assert "lint: calc.py: line too long" in client.text()
    assert "still under review" in client.text()
    edits = client.tool_calls("edit")
    assert client.progress(edits[0].tool_call_id)[-1].status == "failed"  # not committed
    # Asked again about the same diff shown anew: a tool call that the commit completes.
    assert [p.tool_call_id for p in client.permissions] == [e.tool_call_id for e in edits]
    assert edits[1].content == edits[0].content
    assert client.progress(edits[1].tool_call_id)[-1].status == "completed"
    assert len(scripted_server.chat_requests) == 2  # no new model call
