"""The MCP servers an editor hands over in session/new: started by `tui-engineer acp`, their
tools offered to the model through the OpenAI tools API, each call run and shown as an ACP tool
call, its result sent back before the model's edit. Real parts only: the agent a subprocess
driven by the ACP SDK's client side, the real openai client over HTTP to the scripted server
(whose model answers first with tool calls, then with its edit), real MCP servers over stdio
(one written here with the MCP SDK, tests/mcp_glossary_server.py; the MCP project's time
server from the package index), real git and pytest."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from acp.schema import EnvVariable, McpServerStdio

from tests.acp.acp_support import add_sub, agent_env, mcp_session
from tests.conftest import git
from tests.engine_support import MUL_ON_SUB, SUB, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session

GLOSSARY = str(Path(__file__).parents[1] / "mcp_glossary_server.py")
TIME_SERVER = str(Path(sys.executable).parent / "mcp-server-time")


def stdio(name: str, command: str, *args: str) -> McpServerStdio:
    return McpServerStdio(name=name, command=command, args=list(args), env=[])


def tool_messages(server: ScriptedServer) -> list[list[dict]]:
    """Per chat request: the tool results it carried."""
    return [[m for m in r.messages if m["role"] == "tool"] for r in server.chat_requests]


@whole_session
async def test_the_editors_mcp_tools_are_called_shown_and_answered_before_the_edit(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        # The model looks two things up (one tool of each server) before its edit.
        Reply(
            tool_calls=[
                ("glossary__lookup_term", {"term": "sub"}),
                ("time__get_current_time", {"timezone": "Etc/UTC"}),
            ]
        ),
        Reply(text="Adding sub, as the glossary says.\n\n" + SUB),
    )
    servers = [
        stdio("glossary", sys.executable, GLOSSARY),
        stdio("time", TIME_SERVER),
        stdio("broken", sys.executable, GLOSSARY, "--fail"),
    ]
    async with mcp_session(tmp_path, scripted_server, repo, servers) as (agent, session, client):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    plan, asked, edit = scripted_server.chat_requests
    offered = {t["function"]["name"] for t in plan.tools}
    assert offered == {
        "glossary__lookup_term", "glossary__wait", "glossary__closed",
        "time__get_current_time", "time__convert_time",
    }  # fmt: skip
    assert {t["function"]["name"] for t in asked.tools} == offered
    # The results reached the model's next request, before its edit.
    results = [m["content"] for m in tool_messages(scripted_server)[2]]
    assert results[0] == "sub: subtraction: a - b, the difference of two numbers"
    assert json.loads(results[1])["timezone"] == "Etc/UTC"
    # The editor saw each call as a tool call of its kind (both read-only), completed with
    # the result.
    calls = client.mcp_calls()
    assert [(c.kind, c.title) for c in calls] == [
        ("read", "glossary: lookup_term (for the propose call)"),
        ("read", "time: get_current_time (for the propose call)"),
    ]
    for call in calls:
        (done,) = client.progress(call.tool_call_id)
        assert done.status == "completed"
    assert "subtraction" in client.progress(calls[0].tool_call_id)[0].content[0].content.text
    # A server that did not start: one line, and the session went on without it.
    text = client.text()
    assert text.count("MCP server broken") == 1
    assert "did not start" in text and "cannot open glossary.db" in text
    assert "MCP server glossary started: lookup_term, wait, closed." in text


@whole_session
async def test_a_tool_that_hangs_is_cut_off_said_and_the_step_still_commits(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(tool_calls=[("glossary__wait", {"seconds": 120})]),
        Reply(tool_calls=[("glossary__closed", {})]),
        Reply(text=SUB),
    )
    env = agent_env(TUI_ENGINEER_MCP_TOOL_TIMEOUT="3")
    servers = [McpServerStdio(name="glossary", command=sys.executable, args=[GLOSSARY],
                              env=[EnvVariable(name="GLOSSARY_MOOD", value="slow")])]  # fmt: skip
    async with mcp_session(
        tmp_path, scripted_server, repo, servers, env
    ) as (agent, session, client):  # fmt: skip
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    hung, failed = (m[-1]["content"] for m in tool_messages(scripted_server)[2:4])
    assert "gave no answer within 3 s" in hung and "not offered again" in hung
    assert failed.startswith("Error executing tool closed")
    # The hung tool is no longer offered.
    last = {t["function"]["name"] for t in scripted_server.chat_requests[-1].tools}
    assert "glossary__wait" not in last and "glossary__lookup_term" in last
    calls = client.mcp_calls()
    assert [client.progress(c.tool_call_id)[0].status for c in calls] == ["failed", "failed"]


@whole_session
async def test_a_model_server_without_tool_support_is_asked_without_tools_said_once(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    scripted_server.tools = False
    add_sub(scripted_server)
    servers = [stdio("glossary", sys.executable, GLOSSARY)]
    async with mcp_session(tmp_path, scripted_server, repo, servers) as (agent, session, client):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert client.text().count("has no tool support") == 1
    assert [bool(r.tools) for r in scripted_server.chat_requests] == [True, False, False]


@whole_session
async def test_the_servers_start_once_per_editor_session_not_once_per_request(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    """Each prompt that is a new request is a run of its own; the editor's MCP servers are the
    session's, started once for all of them (a server's start is ~1.4 s, and its state, a
    login say, would be lost between requests). They stop when the session does."""
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB),
        Reply(text=plan_reply("Add mul")),
        Reply(text=MUL_ON_SUB),
    )
    starts = tmp_path / "starts.txt"
    servers = [stdio("glossary", sys.executable, GLOSSARY, "--starts", str(starts))]
    async with mcp_session(tmp_path, scripted_server, repo, servers) as (agent, session, client):
        for prompt in ("add sub", "done", "add mul", "done"):
            assert await agent.prompt(session, prompt) == "end_turn"

    assert git(repo, "log", "--format=%s").splitlines() == ["Add mul", "Add sub", "initial"]
    assert starts.read_text().splitlines() == ["started"]
    assert client.text().count("MCP server glossary started") == 1
    # Both requests were offered its tools.
    assert all(r.tools for r in scripted_server.chat_requests)
