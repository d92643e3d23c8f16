"""The human's shell over ACP, with an editor on the SDK's client side: `!command` runs in the
editor's own terminal where the client offers terminals (terminal/create, shown in the thread,
read back with terminal/output), beside the agent where it does not; terminal output the editor
attaches to a prompt goes to the model as the app's `y` sends it: the command, how it ended, the
output's tail, secrets masked."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass, field
from typing import Any

import pytest
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EmbeddedResourceContentBlock,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    TerminalToolCallContent,
    TextContentBlock,
    TextResourceContents,
    WaitForTerminalExitResponse,
)

from tests.acp.acp_support import RecordingClient, agent_env, descendants, running_agent
from tests.conftest import git
from tests.engine_support import DIV, SUB, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.acp.shell import is_terminal_uri, shell_command

SECRET = "tok-the-service-secret-42"  # MY_SERVICE_TOKEN, in the agent's and the editor's env
# What the human runs to show the model: sub's wrong answer, and (by accident) a secret.
SHOWS_THE_BUG = (
    "python -c \"import os; from calc import sub; print('sub(2, 5) =', sub(5, 2)); "
    "print('token:', os.environ['MY_SERVICE_TOKEN']); raise SystemExit(1)\""
)
TERMINALS = ClientCapabilities.model_validate({"terminal": True})


@dataclass
class TerminalClient(RecordingClient):
    """An editor that offers terminals: each terminal/create runs the command as the editor's
    terminal panel would (its own process group, the editor's environment), kept until
    released."""

    created: list[tuple[str, list[str], str | None]] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    _running: dict[str, tuple[asyncio.subprocess.Process, list[bytes], Any]] = field(
        default_factory=dict
    )

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None, env: Any = None,
        cwd: str | None = None, output_byte_limit: int | None = None, **kwargs: Any,
    ) -> CreateTerminalResponse:  # fmt: skip
        self.created.append((command, list(args or []), cwd))
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env={**os.environ, "MY_SERVICE_TOKEN": SECRET},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        chunks: list[bytes] = []

        async def read() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(4096):
                chunks.append(chunk)

        terminal = f"term-{len(self.created)}"
        self._running[terminal] = (process, chunks, asyncio.ensure_future(read()))
        return CreateTerminalResponse(terminal_id=terminal)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        process, _, reading = self._running[terminal_id]
        code = await process.wait()
        await reading
        return WaitForTerminalExitResponse(**_exit(code).model_dump())

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        process, chunks, _ = self._running[terminal_id]
        done = process.returncode is not None
        return TerminalOutputResponse(
            output=b"".join(chunks).decode(errors="replace"), truncated=False,
            exit_status=_exit(process.returncode) if done else None,
        )  # fmt: skip

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.killed.append(terminal_id)
        process, _, _ = self._running[terminal_id]
        os.killpg(process.pid, signal.SIGKILL)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.released.append(terminal_id)
        return ReleaseTerminalResponse()


def _exit(code: int | None) -> TerminalExitStatus:
    if code is not None and code < 0:
        return TerminalExitStatus(signal=signal.Signals(-code).name)
    return TerminalExitStatus(exit_code=code)


def _sent(server: ScriptedServer, index: int) -> str:
    """What the model call `index` carried: its messages' text."""
    return "\n".join(str(m.get("content")) for m in server.chat_requests[index].messages)


def _plan_then_div(server: ScriptedServer) -> None:
    server.script(
        Reply(text=plan_reply("Add sub")), Reply(text=SUB),
        Reply(text=plan_reply("Add div")), Reply(text=DIV),
    )  # fmt: skip


@whole_session
async def test_a_command_run_in_the_editors_terminal_goes_with_the_answer(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # The model's sub is wrong (it subtracts the wrong way round in the human's eyes); at
    # "What is still wrong?" the human runs a line that shows it in the editor's terminal.
    repo = make_repo()
    _plan_then_div(scripted_server)
    client = TerminalClient()
    env = agent_env(MY_SERVICE_TOKEN=SECRET)
    async with running_agent(tmp_path, scripted_server.base_url, client=client, env=env) as agent:
        session = await agent.start(repo, capabilities=TERMINALS)
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert "`!command` runs a command in your terminal" in client.text()
        assert await agent.prompt(session, f"!{SHOWS_THE_BUG}") == "end_turn"
        said = client.text()
        assert await agent.prompt(session, "the order is wrong, and add div") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    # It ran in the editor's terminal, in the session's folder, as the human typed it.
    assert client.created == [("bash", ["-c", SHOWS_THE_BUG], str(repo))]
    assert client.released == ["term-1"] and client.killed == []
    (shown,) = [c for c in client.tool_calls("execute") if c.title == f"$ {SHOWS_THE_BUG}"]
    assert shown.content == [TerminalToolCallContent(type="terminal", terminal_id="term-1")]
    (ended,) = client.progress(shown.tool_call_id)
    assert ended.status == "failed" and "exit status 1" in ended.content[-1].content.text
    assert "goes to the model with your next message" in said
    # The answer's plan call has the command, its exit status and output, the secret masked.
    answer = _sent(scripted_server, 2)
    assert "the order is wrong, and add div" in answer
    assert "The human ran this command in the repository (exit status 1)" in answer
    assert "sub(2, 5) = 3" in answer and "token: [masked]" in answer
    assert SECRET not in str(scripted_server.chat_requests)
    assert "Add div" in git(repo, "log", "--format=%s")


async def test_terminal_output_the_editor_attaches_reaches_the_model_masked(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # Zed's "add to thread" of a terminal selection: an embedded resource, its prompt line first.
    repo = make_repo()
    scripted_server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    selection = (
        "$ python -m pytest -q\nE   NameError: name 'sub' is not defined\n"
        f"MY_SERVICE_TOKEN={SECRET}\n1 failed in 0.02s\n"
    )
    attached = EmbeddedResourceContentBlock(
        type="resource",
        resource=TextResourceContents(
            uri="zed:///agent/terminal-selection?lines=4", text=selection, mime_type="text/plain"
        ),
    )
    asked = TextContentBlock(type="text", text="make this pass")
    env = agent_env(MY_SERVICE_TOKEN=SECRET)
    async with running_agent(tmp_path, scripted_server.base_url, env=env) as agent:
        session = await agent.start(repo)
        answer = await agent.conn.prompt(session_id=session, prompt=[asked, attached])
        assert answer.stop_reason == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    plan_call = _sent(scripted_server, 0)
    assert "make this pass" in plan_call
    assert "from the editor's terminal (its exit status not given)" in plan_call
    assert "$ python -m pytest -q" in plan_call and "NameError: name 'sub'" in plan_call
    assert SECRET not in plan_call and "MY_SERVICE_TOKEN=[masked]" in plan_call
    assert "zed:///agent/terminal-selection" not in plan_call  # not shown as a file


async def test_without_editor_terminals_the_command_runs_beside_the_agent(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    client = RecordingClient()
    async with running_agent(tmp_path, scripted_server.base_url, client=client) as agent:
        session = await agent.start(repo)  # no terminal capability
        assert await agent.prompt(session, "!cd tests && export WHERE=here") == "end_turn"
        assert await agent.prompt(session, '!pwd; echo "$WHERE"; exit 3') == "end_turn"
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    second = client.tool_calls("execute")[1]
    (ended,) = client.progress(second.tool_call_id)
    text = ended.content[-1].content.text
    assert ended.status == "failed" and text.startswith("exit status 3")
    assert f"{repo / 'tests'}\nhere" in text  # cd and export kept, as in a terminal
    request = _sent(scripted_server, 0)
    assert "add sub" in request and "(exit status 3)" in request
    assert f"{repo / 'tests'}\nhere" in request
    assert "export WHERE" not in request  # only the last command goes


async def test_cancel_stops_a_command_in_the_editors_terminal(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    client = TerminalClient()
    async with running_agent(tmp_path, scripted_server.base_url, client=client) as agent:
        session = await agent.start(repo, capabilities=TERMINALS)
        turn = asyncio.ensure_future(agent.prompt(session, "!sleep 60; echo never"))
        for _ in range(1200):  # a minute at most: a loaded machine starts the command late
            if client.created:
                break
            await asyncio.sleep(0.05)
        assert client.created, "the command never reached the editor's terminal"
        await agent.conn.cancel(session_id=session)
        assert await asyncio.wait_for(turn, 20) == "cancelled"

    assert client.killed == ["term-1"] and client.released == ["term-1"]
    (shown,) = client.tool_calls("execute")
    assert client.progress(shown.tool_call_id)[-1].status == "failed"
    assert scripted_server.chat_requests == []  # nothing went to the model


@pytest.mark.parametrize(
    ("uri", "terminal"),
    [
        ("zed:///agent/terminal-selection?lines=3", True),  # Zed's terminal selection
        ("terminal://1", True),
        ("vscode-terminal:/1/2", True),
        ("file:///home/me/repo/terminal/app.py", False),  # a file in a folder named so
        ("https://zed.dev/docs/terminal", False),  # a page the editor fetched
        ("zed:///agent/file?path=/repo/calc.py", False),
    ],
)
def test_which_attached_resources_are_terminal_output(uri: str, terminal: bool) -> None:
    assert is_terminal_uri(uri) is terminal


def test_a_file_attached_to_a_command_prompt_is_not_run() -> None:
    # prompt_text puts an attached file after a blank line: only the typed line runs.
    prompt = "!pytest -x\n\n/repo/calc.py:\n```\nrm -rf build\n```"
    assert shell_command(prompt) == "pytest -x"


async def test_cancel_stops_a_command_run_beside_the_agent(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    client = RecordingClient()
    async with running_agent(tmp_path, scripted_server.base_url, client=client) as agent:
        session = await agent.start(repo)  # no terminal capability
        turn = asyncio.ensure_future(agent.prompt(session, "!sleep 60; echo never"))
        for _ in range(200):
            if any("sleep 60" in line for _, line in descendants(agent.process.pid)):
                break
            await asyncio.sleep(0.05)
        await agent.conn.cancel(session_id=session)
        assert await asyncio.wait_for(turn, 20) == "cancelled"
        for _ in range(100):  # SIGTERM to the command's process group: gone at once
            if not any("sleep 60" in line for _, line in descendants(agent.process.pid)):
                break
            await asyncio.sleep(0.05)
        assert not any("sleep 60" in line for _, line in descendants(agent.process.pid))

    (shown,) = client.tool_calls("execute")
    assert client.progress(shown.tool_call_id)[-1].status == "failed"
