"""Driving `tui-engineer acp` as an editor would: the SDK's own client side spawns the agent as a
subprocess and talks JSON-RPC over its stdio. Every message the agent sends is checked against
the SDK's schema (its pydantic models) as it arrives."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalRequest,
    DeniedOutcome,
    Error,
    Implementation,
    InitializeResponse,
    KillTerminalRequest,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ReadTextFileRequest,
    ReleaseTerminalRequest,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SessionNotification,
    SetSessionModeResponse,
    TerminalOutputRequest,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    WaitForTerminalExitRequest,
)
from pydantic import BaseModel

from tests.engine_support import KEY, MUL, SUB, plan_reply
from tests.scripted_server import Gate, Reply, ScriptedServer

RESPONSES: dict[str, type[BaseModel]] = {
    "initialize": InitializeResponse,
    "session/new": NewSessionResponse,
    "session/load": LoadSessionResponse,
    "session/prompt": PromptResponse,
    "session/set_mode": SetSessionModeResponse,
    "session/list": ListSessionsResponse,
}
REQUESTS: dict[str, type[BaseModel]] = {
    "session/update": SessionNotification,
    "session/request_permission": RequestPermissionRequest,
    "fs/read_text_file": ReadTextFileRequest,
    # The editor's terminal, for a `!command` (a client that offers terminals).
    "terminal/create": CreateTerminalRequest,
    "terminal/output": TerminalOutputRequest,
    "terminal/wait_for_exit": WaitForTerminalExitRequest,
    "terminal/release": ReleaseTerminalRequest,
    "terminal/kill": KillTerminalRequest,
}

# A client on the newest SDK that says it reads `usage_update` (no part of the stable schema).
READS_USAGE = ClientCapabilities.model_validate({"_meta": {"usage_update": True}})

# Answers a permission request: the option id to select, or None to answer "cancelled".
Policy = Callable[[ToolCallUpdate, list[PermissionOption]], Any]


class SchemaCheck:
    """A stream observer: every message from the agent validates against the SDK's models
    (requests and notifications by method, responses by the method of the request they answer).
    Problems are kept, for the test to assert there are none."""

    def __init__(self) -> None:
        self.asked: dict[object, str] = {}
        self.problems: list[str] = []
        self.seen: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction == StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.asked[message["id"]] = message["method"]
            return
        self.seen.append(message)
        try:
            self._check(message)
        except Exception as err:  # noqa: BLE001 - kept for the assertion
            self.problems.append(f"{message}: {err}")

    def _check(self, message: dict[str, Any]) -> None:
        assert message.get("jsonrpc") == "2.0", "not JSON-RPC 2.0"
        if "method" in message:
            REQUESTS[message["method"]].model_validate(message["params"])
            return
        method = self.asked.pop(message["id"])
        if "error" in message:
            Error.model_validate(message["error"])
        else:
            RESPONSES[method].model_validate(message["result"])


@dataclass
class RecordingClient:
    """An editor that keeps every update and answers permission requests by `policy`."""

    policy: Policy = lambda call, options: "accept"
    updates: list[Any] = field(default_factory=list)
    permissions: list[ToolCallUpdate] = field(default_factory=list)
    offered: list[list[PermissionOption]] = field(default_factory=list)  # each request's options
    on_permission: Callable[[ToolCallUpdate], Any] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:  # fmt: skip
        self.permissions.append(tool_call)
        self.offered.append(options)
        if self.on_permission is not None:
            self.on_permission(tool_call)
        chosen = self.policy(tool_call, options)
        if asyncio.iscoroutine(chosen):
            chosen = await chosen
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    # ----- what the editor shows

    def text(self) -> str:
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def plans(self) -> list[list[tuple[str, str]]]:
        return [
            [(e.content, e.status) for e in u.entries]
            for u in self.updates
            if isinstance(u, AgentPlanUpdate)
        ]

    def tool_calls(self, kind: str) -> list[ToolCallStart]:
        return [u for u in self.updates if isinstance(u, ToolCallStart) and u.kind == kind]

    def mcp_calls(self) -> list[ToolCallStart]:
        """The calls of the editor's MCP servers' tools (their ids start "mcp-"), apart from the
        agent's own edits and test runs: what the MCP tests check the kind and status of."""
        return [
            u
            for u in self.updates
            if isinstance(u, ToolCallStart) and u.tool_call_id.startswith("mcp-")
        ]

    def progress(self, call_id: str) -> list[ToolCallProgress]:
        return [
            u for u in self.updates if isinstance(u, ToolCallProgress) and u.tool_call_id == call_id
        ]


def agent_command() -> list[str]:
    """`tui-engineer acp`: the console script beside this Python (this checkout's code)."""
    script = Path(sys.executable).parent / "tui-engineer"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui_engineer"]


def agent_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": KEY, **extra}


@dataclass
class Agent:
    conn: Any
    process: asyncio.subprocess.Process
    client: RecordingClient
    check: SchemaCheck
    stderr: Path

    async def start(
        self, cwd: Path, mcp_servers: list[Any] | None = None,
        capabilities: ClientCapabilities = READS_USAGE,
    ) -> str:  # fmt: skip
        """initialize, then session/new in `cwd` (handing over `mcp_servers`): the session
        id. The client says it reads `usage_update` unless `capabilities` say otherwise."""
        await self.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities,
            client_info=Implementation(name="tests", version="0"),
        )
        made = await self.conn.new_session(cwd=str(cwd), mcp_servers=mcp_servers or [])
        return made.session_id

    async def load(self, cwd: Path, session_id: str) -> LoadSessionResponse:
        """initialize, then session/load of a recorded session in `cwd` (as an editor reopening
        a thread does)."""
        await self.conn.initialize(protocol_version=1)
        return await self.conn.load_session(cwd=str(cwd), session_id=session_id, mcp_servers=[])

    async def prompt(self, session_id: str, text: str) -> str:
        said = [TextContentBlock(type="text", text=text)]
        answer = await self.conn.prompt(session_id=session_id, prompt=said)
        return answer.stop_reason

    def log(self) -> str:
        return self.stderr.read_text(errors="replace")


async def session_new_error(agent: Agent, cwd: Path) -> RequestError:
    """initialize, then a session/new in `cwd` that must fail: the JSON-RPC error it answered,
    for the tests of the sentence an editor shows when a session cannot start there."""
    await agent.conn.initialize(protocol_version=1)
    with pytest.raises(RequestError) as err:
        await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])
    return err.value


@contextlib.asynccontextmanager
async def running_agent(
    tmp_path: Path, base_url: str, *flags: str, client: RecordingClient | None = None,
    env: dict[str, str] | None = None, pipeline: bool = False, check: SchemaCheck | None = None,
) -> AsyncIterator[Agent]:  # fmt: skip
    """The agent as a subprocess, with the scripted server's URL and the flags that make its
    model calls come in script order (the whole suite each run; no step prepared ahead unless
    `pipeline`)."""
    client = client or RecordingClient()
    check = check or SchemaCheck()
    stderr = tmp_path / "agent-stderr.txt"
    args = [*agent_command(), "acp", "--base-url", base_url, "--model", "test-model"]
    args += ["--full-tests-always", *flags, *([] if pipeline else ["--no-pipeline"])]
    with stderr.open("wb") as log:
        async with spawn_agent_process(
            client, args[0], *args[1:], env=env or agent_env(), cwd=tmp_path,
            transport_kwargs={"stderr": log}, observers=[check],
        ) as (conn, process):  # fmt: skip
            agent = Agent(conn, process, client, check, stderr)
            yield agent
    assert check.problems == [], check.problems


@contextlib.asynccontextmanager
async def agent_session(
    tmp_path: Path, server: ScriptedServer, repo: Path, *flags: str,
    client: RecordingClient | None = None, pipeline: bool = False,
) -> AsyncIterator[tuple[Agent, str]]:  # fmt: skip
    """`running_agent` with a session already started in `repo`: the agent and the session id."""
    async with running_agent(
        tmp_path, server.base_url, *flags, client=client, pipeline=pipeline
    ) as agent:
        yield agent, await agent.start(repo)


@contextlib.asynccontextmanager
async def mcp_session(
    tmp_path: Path, server: ScriptedServer, repo: Path, mcp_servers: list[Any],
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Agent, str, RecordingClient]]:  # fmt: skip
    """A session started in `repo` with the editor's MCP servers `mcp_servers` handed over in
    session/new (the agent run with `env`, if given): the agent, the session id and the editor's
    client, which the MCP tests read the tool calls from."""
    client = RecordingClient()
    async with running_agent(tmp_path, server.base_url, client=client, env=env) as agent:
        yield agent, await agent.start(repo, mcp_servers), client


def add_sub(server: ScriptedServer) -> None:
    """The model plans one step, sub, and proposes it once: the shortest whole request, for the
    tests about what the editor does around a single review."""
    server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))


def add_sub_and_mul(server: ScriptedServer, *then: Reply) -> None:
    """The model plans two steps, sub and mul, and proposes sub; `then` are its replies after
    that (mul's proposal, or sub's again first), the part each two-step test tells apart."""
    server.script(Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB), *then)


def sub_then_mul(server: ScriptedServer) -> None:
    """The model plans and proposes sub for the first request, then mul for the next one."""
    server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB),
        Reply(text=plan_reply("Add mul")),
        Reply(text=MUL),
    )


@dataclass
class CancelAt:
    """A policy that cancels the turn at step `step`'s permission and accepts the others
    (`agent` and `session` are set once the session started)."""

    step: int
    agent: Agent | None = None
    session: str = ""

    async def __call__(self, call, options) -> str | None:
        if call.title.startswith(f"Commit step {self.step}:"):
            assert self.agent is not None
            await self.agent.conn.cancel(session_id=self.session)
            return None  # the pending request answers cancelled, as the protocol asks
        return "accept"


@contextlib.asynccontextmanager
async def session_cancelled_at(
    tmp_path: Path, server: ScriptedServer, repo: Path, step: int
) -> AsyncIterator[tuple[Agent, str, RecordingClient]]:
    """`agent_session` whose editor cancels the turn at step `step`'s permission (and accepts
    the others): the agent, the session id and the editor's client."""
    cancel = CancelAt(step)
    client = RecordingClient(policy=cancel)
    async with agent_session(tmp_path, server, repo, client=client) as (agent, session):
        cancel.agent, cancel.session = agent, session
        yield agent, session, client


@contextlib.asynccontextmanager
async def review_cancelled(
    tmp_path: Path, server: ScriptedServer, repo: Path
) -> AsyncIterator[tuple[Agent, str, RecordingClient]]:
    """A one-step request, "add sub" (scripted by `add_sub`), whose turn the editor cancelled at
    the step's review: the agent, the session id and the editor's client, for the tests of what
    the user does next with the step left waiting."""
    add_sub(server)
    async with session_cancelled_at(tmp_path, server, repo, 1) as (agent, session, client):
        assert await agent.prompt(session, "add sub") == "cancelled"
        yield agent, session, client


async def cancel_while_held(agent: Agent, session: str, text: str, held: Gate) -> None:
    """Prompt `text`, cancel the turn once the model's reply is held at `held` (the user's
    cancel while the model works), see the turn end cancelled, then let the reply go."""
    turn = asyncio.ensure_future(agent.prompt(session, text))
    await held.arrived(60)
    await agent.conn.cancel(session_id=session)
    assert await asyncio.wait_for(turn, 60) == "cancelled"
    held.open()


@contextlib.asynccontextmanager
async def loaded_session(
    tmp_path: Path, server: ScriptedServer, repo: Path, session: str, client: RecordingClient
) -> AsyncIterator[tuple[Agent, LoadSessionResponse]]:
    """A new agent process (an editor opened again) with `session` loaded into `client`."""
    async with running_agent(tmp_path, server.base_url, client=client) as agent:
        yield agent, await agent.load(repo, session)


def two_steps(server: ScriptedServer) -> None:
    """The model plans sub and mul and proposes each, with a sentence before its edit."""
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text="Adding sub.\n\n" + SUB),
        Reply(text="Adding mul.\n\n" + MUL),
    )


def descendants(pid: int) -> list[tuple[int, str]]:
    """Every living process under `pid` (from /proc): (pid, command line)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] == "Z":  # a zombie has ended; only its reaping is left
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = [], list(children.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            line = (Path("/proc") / str(child) / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        found.append((child, line.decode(errors="replace")))
        todo += children.get(child, [])
    return found
