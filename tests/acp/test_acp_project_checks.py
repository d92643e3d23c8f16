"""An editor sees the project's own checks as it sees test runs: each check run on a step is a
tool call of kind execute, its command, its findings as text, failed while it has new ones. The
agent a subprocess, ruff in the project's own .venv, the model over HTTP."""

from __future__ import annotations

from tests.acp.acp_support import RecordingClient, agent_session
from tests.checks_support import RUFF_PROJECT, TESTS, tool_venv
from tests.checks_support import ruff_wheels as ruff_wheels  # a fixture
from tests.conftest import git
from tests.engine.test_project_checks import DROP_OS, FIX_WITH_OS
from tests.engine_support import plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session


@whole_session
async def test_each_check_run_is_an_execute_tool_call(
    make_repo, scripted_server: ScriptedServer, tmp_path, ruff_wheels
) -> None:
    repo = make_repo(RUFF_PROJECT)
    tool_venv(repo, ruff_wheels)
    scripted_server.script(
        Reply(text=plan_reply("Fix add")), Reply(text=FIX_WITH_OS), Reply(text=DROP_OS)
    )
    client = RecordingClient()
    flags = ("--test-cmd", TESTS)
    async with agent_session(tmp_path, scripted_server, repo, *flags, client=client) as (
        agent,
        session,
    ):
        assert await agent.prompt(session, "fix add") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"

    assert git(repo, "log", "-1", "--format=%s") == "Fix add"
    checks = [c for c in client.tool_calls("execute") if c.title == "Check: ruff check"]
    assert len(checks) == 2 and "ruff check" in checks[0].raw_input["command"]
    first, second = (client.progress(c.tool_call_id)[-1] for c in checks)
    assert first.status == "failed" and "`os` imported but unused" in first.content[0].content.text
    assert second.status == "completed"
