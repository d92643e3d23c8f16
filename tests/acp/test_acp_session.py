"""A whole session driven by an editor over ACP (the SDK's client side, the agent a subprocess,
the real openai client over HTTP to the scripted server, real git and pytest): the plan as plan
entries, each proposal a tool call of kind edit with a diff per file, each test run one of kind
execute, each review a permission request, and nothing committed before the client says yes."""

from __future__ import annotations

from pathlib import Path

from acp.schema import FileEditToolCallContent, SessionInfoUpdate

from tests.acp.acp_support import RecordingClient, agent_session, two_steps
from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import DIV, SUB, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session


def commits(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


async def test_a_two_step_session_accepted_from_the_editor(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    repo = make_repo()
    two_steps(scripted_server)
    at_each_permission: list[tuple[list[str], str, list]] = []
    client = RecordingClient()
    client.on_permission = lambda call: at_each_permission.append(
        (commits(repo), (repo / "calc.py").read_text(), client.plans()[-1])
    )
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "add sub and mul") == "end_turn"
        # The turn ends with the question; the next prompt answers it.
        assert client.text().rstrip().endswith("answer `done` to finish the session.")
        assert await agent.prompt(session, "done") == "end_turn"

    assert commits(repo) == ["Add mul", "Add sub", "initial"]
    titles = [u.title for u in client.updates if isinstance(u, SessionInfoUpdate)]
    assert titles == ["add sub and mul"]  # the editor's thread is named by the request
    assert "Finished: 2 step(s) committed." in client.text()
    assert "Adding sub." in client.text()  # the model's prose, its edit blocks left out
    assert "<<<<<<< SEARCH" not in client.text()
    # Nothing committed, nothing written in the user's tree, before each permission.
    (first_log, first_calc, first_plan), (second_log, second_calc, _) = at_each_permission
    assert first_log == ["initial"] and first_calc == SAMPLE_FILES["calc.py"]
    assert second_log == ["Add sub", "initial"] and "def mul" not in second_calc
    assert first_plan == [("1. Add sub", "in_progress"), ("2. Add mul", "pending")]
    assert client.plans()[-1] == [("1. Add sub", "completed"), ("2. Add mul", "completed")]
    # Each proposal: a tool call of kind edit, one diff per file with the whole old and new text.
    edits = client.tool_calls("edit")
    assert len(edits) == 2 and [p.tool_call_id for p in client.permissions] == [
        e.tool_call_id for e in edits
    ]
    diff = edits[0].content[0]
    assert isinstance(diff, FileEditToolCallContent)
    assert diff.path == str(repo / "calc.py")
    assert diff.old_text == SAMPLE_FILES["calc.py"] and "def sub(a, b)" in diff.new_text
    assert [p.status for p in client.progress(edits[1].tool_call_id)] == ["completed"]
    # Each test run: a tool call of kind execute, its result as text.
    runs = client.tool_calls("execute")
    assert len(runs) >= 3  # the starting commit's run, then one per step
    finished = [p for r in runs for p in client.progress(r.tool_call_id)]
    assert all(p.status == "completed" for p in finished)
    assert any("passed" in p.content[0].content.text for p in finished)


ENV_TEST = (
    "import os\n\n\ndef test_the_key_is_not_here():\n"
    "    assert not any('sk-test-secret' in value for value in os.environ.values())\n"
)


@whole_session
async def test_the_answer_to_what_is_still_wrong_plans_more_steps_in_the_same_session(
    make_repo, scripted_server: ScriptedServer, tmp_path
) -> None:
    # The repo's own suite checks that the API key never reaches the tests' environment.
    repo = make_repo({**SAMPLE_FILES, "tests/test_env.py": ENV_TEST})
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB),
        Reply(text=plan_reply("Add div")),
        Reply(text=DIV),
    )
    client = RecordingClient()
    async with agent_session(tmp_path, scripted_server, repo, client=client) as (agent, session):
        assert await agent.prompt(session, "add sub") == "end_turn"
        assert await agent.prompt(session, "division is missing too") == "end_turn"
        assert client.text().rstrip().endswith("answer `done` to finish the session.")

    assert commits(repo) == ["Add div", "Add sub", "initial"]
    assert "division is missing too" in str(scripted_server.chat_requests[2].messages)
    assert client.plans()[-1] == [("1. Add sub", "completed"), ("2. Add div", "completed")]
    runs = [p for r in client.tool_calls("execute") for p in client.progress(r.tool_call_id)]
    assert runs and all(p.status == "completed" for p in runs)
    assert not any("test_the_key_is_not_here" in p.content[0].content.text for p in runs)
