"""A permission request an editor can show on its own: it carries the proposal's kind, diffs,
test result and locations (the first changed line of each hunk); its options are one of each of
the protocol's kinds (Reject proposes again, Skip leaves the step, "always" switches the session
to auto, said in the thread and the mode); usage, the slash commands and session/list."""

from __future__ import annotations

from acp.schema import (
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    FileEditToolCallContent,
    UsageUpdate,
)

from tests.acp.acp_support import (
    RecordingClient,
    add_sub,
    agent_session,
    review_cancelled,
    two_steps,
)
from tests.conftest import SAMPLE_FILES, git
from tests.scripted_server import ScriptedServer
from tests.tiers import whole_session

# calc.py with 40 lines before `add`: step 1's change starts at line 45 of the new text.
LONG_CALC = "".join(f"X{i} = {i}\n" for i in range(40)) + "\n\ndef add(a, b):\n    return a + b\n"


def commits(repo) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def by_kind(kind: str):
    """A client that answers by the option's kind, as an editor's buttons do."""
    return lambda call, options: next(o.option_id for o in options if o.kind == kind)


@whole_session
async def test_the_request_shows_what_it_asks_and_always_switches_to_auto(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo({**SAMPLE_FILES, "calc.py": LONG_CALC})
    two_steps(scripted_server)
    client = RecordingClient(policy=by_kind("allow_always"))
    async with agent_session(
        tmp_path, scripted_server, repo, "--max-tokens", "200000", client=client
    ) as (agent, session):
        assert await agent.prompt(session, "add sub and mul") == "end_turn"

    assert commits(repo) == ["Add mul", "Add sub", "initial"]
    # Asked once: step 2's tests passed, and "always" made the session auto.
    (asked,) = client.permissions
    assert asked.kind == "edit" and asked.title.startswith("Commit step 1: Add sub?")
    diff, summary = asked.content
    assert isinstance(diff, FileEditToolCallContent) and diff.path == str(repo / "calc.py")
    assert diff.old_text == LONG_CALC and "def sub(a, b):" in diff.new_text
    assert "Tests: " in summary.content.text and "passed" in summary.content.text
    (where,) = asked.locations
    assert where.path == str(repo / "calc.py") and where.line == 45
    assert "def sub(a, b):" in diff.new_text.splitlines()[where.line - 1 : where.line + 2]
    (options,) = client.offered
    kinds = [o.kind for o in options]
    assert sorted(kinds) == ["allow_always", "allow_once", "reject_always", "reject_once"]
    modes = [u.current_mode_id for u in client.updates if isinstance(u, CurrentModeUpdate)]
    assert modes == ["auto"]
    assert "Mode: auto from now on" in client.text()
    assert "Step 2 accepted: auto (tests passed)." in client.text()
    # Usage against the budget, and the slash commands offered.
    usage = [u for u in client.updates if isinstance(u, UsageUpdate)]
    assert usage and usage[-1].size == 200000 and 0 < usage[-1].used < 200000
    (offered,) = [u for u in client.updates if isinstance(u, AvailableCommandsUpdate)]
    names = [c.name for c in offered.available_commands]
    assert names == ["done", "skip", "undo", "mode", "tests"]


@whole_session
async def test_skip_is_told_from_reject_by_its_kind(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    add_sub(scripted_server)
    client = RecordingClient(policy=by_kind("reject_always"))
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"

    assert commits(repo) == ["initial"]
    assert len(client.permissions) == 1 and len(scripted_server.chat_requests) == 2
    assert client.plans()[-1] == [("1. Add sub (skipped: skipped in the editor)", "completed")]


@whole_session
async def test_slash_commands_act_and_never_reach_the_model_and_the_session_is_listed(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    add_sub(scripted_server)
    client = RecordingClient(policy=lambda call, options: "reject")
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "/mode auto") == "end_turn"
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert client.permissions == []  # auto: its tests passed
        assert commits(repo) == ["Add sub", "initial"]
        runs = len(client.tool_calls("execute"))
        assert await agent.prompt(session, "/tests") == "end_turn"
        (run,) = client.tool_calls("execute")[runs:]
        assert client.progress(run.tool_call_id)[-1].status == "completed"
        assert await agent.prompt(session, "/undo") == "end_turn"
        assert commits(repo) == ["initial"]
        assert await agent.prompt(session, "/done") == "end_turn"
        assert "Finished" in client.text()
        listed = await agent.conn.list_sessions(cwd=str(repo))

    assert len(scripted_server.chat_requests) == 2  # the plan and the edit: no command
    assert not any("/mode" in str(r.messages) for r in scripted_server.chat_requests)
    assert [u.current_mode_id for u in client.updates if isinstance(u, CurrentModeUpdate)] == [
        "auto"
    ]
    assert [(s.session_id, s.title) for s in listed.sessions] == [(session, "add sub")]


@whole_session
async def test_skip_after_a_cancel_at_a_review_skips_that_step_unasked(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    async with review_cancelled(tmp_path, scripted_server, repo) as (agent, session, client):
        assert await agent.prompt(session, "/skip") == "end_turn"
        assert "What is still wrong?" in client.text()

    assert commits(repo) == ["initial"]
    assert len(client.permissions) == 1  # the step shown again was skipped unasked
    assert client.plans()[-1] == [
        ("1. Add sub (skipped: skipped in the editor (/skip))", "completed")
    ]
    assert len(scripted_server.chat_requests) == 2  # no model call for the command
