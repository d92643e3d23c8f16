"""An editor that offers fs/read_text_file: the files the model sees are read through it, so
its unsaved buffers are what the model works on; the shadow still holds the saved tree, and a
buffer that differs from the saved file is said in the thread (once)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
)

from tests.acp.acp_support import RecordingClient, running_agent
from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session

# One step whose file is calc.py: its edit call shows the file.
PLAN = (
    "```json\n"
    + json.dumps(
        {"steps": [{"title": "Add sub", "description": "sub", "files": ["calc.py"], "verify": "x"}]}
    )
    + "\n```\n"
)
UNSAVED = "# Unsaved in the editor: keep add() pure.\n"


@dataclass
class EditorWithBuffers(RecordingClient):
    """An editor holding calc.py with an unsaved change; other files as saved."""

    buffers: dict[str, str] = field(default_factory=dict)
    reads: list[str] = field(default_factory=list)

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        self.reads.append(path)
        text = self.buffers.get(path)
        return ReadTextFileResponse(content=Path(path).read_text() if text is None else text)


@whole_session
async def test_the_model_sees_the_editors_unsaved_buffer_and_the_thread_says_so(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    calc = str(repo / "calc.py")
    client = EditorWithBuffers(buffers={calc: UNSAVED + SAMPLE_FILES["calc.py"]})
    scripted_server.script(Reply(text=PLAN), Reply(text=SUB))
    async with running_agent(tmp_path, scripted_server.base_url, client=client) as agent:
        await agent.conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True)),
            client_info=Implementation(name="tests", version="0"),
        )
        made = await agent.conn.new_session(cwd=str(repo), mcp_servers=[])
        assert await agent.prompt(made.session_id, "add sub to calc.py") == "end_turn"
        assert await agent.prompt(made.session_id, "done") == "end_turn"

    assert calc in client.reads
    for request in scripted_server.chat_requests:  # the plan call and the step's edit call
        assert UNSAVED.strip() in str(request.messages)  # what the editor holds
    # Said once, though both calls showed it; the step is built on the saved file.
    assert client.text().count("calc.py has unsaved changes in your editor") == 1
    assert git(repo, "log", "--format=%s").splitlines() == ["Add sub", "initial"]
    assert UNSAVED not in git(repo, "show", "HEAD:calc.py")


@whole_session
async def test_without_the_capability_the_saved_files_are_shown(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    client = EditorWithBuffers(buffers={str(repo / "calc.py"): UNSAVED})
    scripted_server.script(Reply(text=PLAN), Reply(text=SUB))
    async with running_agent(tmp_path, scripted_server.base_url, client=client) as agent:
        session = await agent.start(repo)  # no fs capability offered
        assert await agent.prompt(session, "add sub to calc.py") == "end_turn"
        assert await agent.prompt(session, "done") == "end_turn"
    assert client.reads == []
    assert "def add(a, b)" in str(scripted_server.chat_requests[1].messages)  # calc.py shown
    assert UNSAVED.strip() not in str(scripted_server.chat_requests[1].messages)
