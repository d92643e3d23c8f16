"""`tui-engineer acp` starting up, as an editor sees it: initialize, session/new and its errors
(each a JSON-RPC error whose message is the sentence the CLI prints; the agent keeps serving),
protocol only on stdout, and no Textual in the process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest
from acp import RequestError

from tests.acp.acp_support import agent_command, agent_env, running_agent, session_new_error
from tests.conftest import SAMPLE_FILES, start_conflicting_merge
from tests.sandbox_support import APPARMOR, path_without, stand_in_bwrap
from tests.scripted_server import ScriptedServer, unused_base_url
from tests.tiers import whole_session
from tui_engineer.vcs import spare
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home
from tui_engineer.vcs.spare_ahead import WORTH_FROM


@whole_session
async def test_initialize_offers_load_and_new_session_offers_the_approval_modes(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    async with running_agent(tmp_path, scripted_server.base_url) as agent:
        hello = await agent.conn.initialize(protocol_version=1)
        assert hello.protocol_version == 1
        assert hello.agent_capabilities.load_session is True
        assert hello.agent_info.name == "tui-engineer"
        made = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        assert made.session_id
        assert made.modes.current_mode_id == "ask"
        assert [m.id for m in made.modes.available_modes] == ["ask", "auto"]


@whole_session
async def test_a_big_repository_gets_its_first_spare_while_the_editor_waits_for_a_prompt(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    """The first shadow's checkout of every file is made between session/new and the first
    prompt, as a spare the prompt's session takes (vcs/spare_ahead.py)."""
    files = {f"data/part_{n}.txt": f"{n}\n" for n in range(WORTH_FROM)}
    repo = make_repo({**SAMPLE_FILES, **files})
    with open_repo(repo) as git_repo:
        pool = spare.pool_for(shadow_home(git_repo))
    async with running_agent(tmp_path, scripted_server.base_url) as agent:
        await agent.conn.initialize(protocol_version=1)
        await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        deadline = time.monotonic() + 60
        while not spare.slots(pool):
            assert time.monotonic() < deadline, "no spare was made before the first prompt"
            await asyncio.sleep(0.1)


@whole_session
async def test_session_new_errors_are_the_cli_sentences_and_the_agent_keeps_serving(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    plain = tmp_path / "plain"
    plain.mkdir()
    merging = make_repo(name="merging")
    start_conflicting_merge(merging, "calc.py")
    async with running_agent(tmp_path, scripted_server.base_url) as agent:
        await agent.conn.initialize(protocol_version=1)
        with pytest.raises(RequestError) as not_repo:
            await agent.conn.new_session(cwd=str(plain), mcp_servers=[])
        cli = subprocess.run(
            [*agent_command(), "run", "x", "-C", str(plain)], capture_output=True, text=True,
            env=agent_env(), timeout=60,
        )  # fmt: skip
        assert cli.returncode == 2
        assert f"tui-engineer: {not_repo.value}" == cli.stderr.strip()
        assert "is not inside a git repository" in str(not_repo.value)
        with pytest.raises(RequestError, match="merge"):
            await agent.conn.new_session(cwd=str(merging), mcp_servers=[])
        # Still serving: a good folder works after the failures.
        made = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        assert made.session_id
    assert "Traceback" not in agent.log()


@whole_session
async def test_session_new_says_when_the_model_server_does_not_answer(make_repo, tmp_path) -> None:
    repo = make_repo()
    gone = unused_base_url()
    async with running_agent(tmp_path, gone) as agent:
        err = await session_new_error(agent, repo)
        assert gone.split("//")[1].split("/")[0] in str(err)  # names where it looked
        assert err.data["kind"] == "ServerUnreachable"
    assert "Traceback" not in agent.log()


@whole_session
async def test_no_key_is_authentication_required(make_repo, scripted_server, tmp_path) -> None:
    repo = make_repo()
    env = {k: v for k, v in agent_env().items() if k != "OPENAI_API_KEY"}
    async with running_agent(tmp_path, scripted_server.base_url, env=env) as agent:
        err = await session_new_error(agent, repo)
        assert err.code == -32000  # ACP's "authentication required"
        assert "OPENAI_API_KEY" in str(err)


def test_stdout_carries_protocol_only_and_textual_is_never_loaded(tmp_path) -> None:
    # A stray print and a child process writing to its stdout, after the protocol took stdout:
    # both land on stderr, and stdout holds the protocol's line alone.
    code = (
        "import asyncio, subprocess, sys\n"
        "from tui_engineer.acp.streams import protocol_streams\n"
        "import tui_engineer.acp.command, tui_engineer.acp.agent, tui_engineer.acp.session\n"
        "async def main():\n"
        "    reader, writer = await protocol_streams()\n"
        "    print('stray print')\n"
        "    subprocess.run(['echo', 'child output'])\n"
        '    writer.write(b\'{"jsonrpc": "2.0", "method": "x"}\\n\')\n'
        "    await writer.drain()\n"
        "    print('textual' in sys.modules, file=sys.stderr)\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input="", capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == '{"jsonrpc": "2.0", "method": "x"}\n'
    assert "stray print" in done.stderr and "child output" in done.stderr
    # No Textual. The stray print may come after this line: sys.stdout, now on stderr, is
    # block-buffered unless PYTHONUNBUFFERED is set (it is not on a fresh machine).
    assert "False" in done.stderr.splitlines() and "True" not in done.stderr.splitlines()


def test_acp_help_names_its_flags() -> None:
    done = subprocess.run(
        [*agent_command(), "acp", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert "--approval" in done.stdout and "--allow-dirty" in done.stdout


@whole_session
async def test_a_host_refusing_the_sandbox_is_a_session_new_error(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    folder = tmp_path / "bin"
    env = agent_env(PATH=path_without(folder, "bwrap"))
    stand_in_bwrap(folder, APPARMOR)  # the system bwrap fails as Ubuntu 24.04's does
    async with running_agent(tmp_path, scripted_server.base_url, env=env) as agent:
        err = await session_new_error(agent, repo)
    cli = subprocess.run(
        [*agent_command(), "run", "add sub", "--base-url", scripted_server.base_url],
        cwd=repo, capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"tui-engineer: {err}"
    assert APPARMOR in str(err) and "--sandbox docker" in str(err)
    assert scripted_server.chat_requests == []


@whole_session
async def test_a_docker_sandbox_without_an_engine_is_a_session_new_error(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    env = agent_env(DOCKER_HOST=f"unix://{tmp_path}/no-docker.sock")
    async with running_agent(
        tmp_path, scripted_server.base_url, "--sandbox", "docker", env=env
    ) as agent:
        err = await session_new_error(agent, repo)
    assert "cannot reach a Docker Engine" in str(err)
    assert "no-docker.sock (from DOCKER_HOST)" in str(err)
    assert err.data["kind"] == "DockerUnavailable"
