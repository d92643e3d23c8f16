"""The user config's [mcp_servers] in a headless session (the TUI starts sessions the same way,
session/run.py): the servers start with the session, the model's tool calls run between its
calls and are printed one line each, the run record keeps them, and every server process ends
with the session. Real parts: the scripted model server over HTTP, a real MCP server over stdio
written with the SDK (tests/mcp_glossary_server.py), real git and pytest."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from tests.engine_support import KEY, SUB, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

GLOSSARY = Path(__file__).parents[1] / "mcp_glossary_server.py"


def user_config(text: str) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "tui-engineer" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def servers_running(mark: Path) -> list[str]:
    """Command lines of living processes running the glossary server with `mark` (its
    --starts file: this test's own, not another test's running beside it on a worker)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if str(GLOSSARY) in line and str(mark) in line and "pytest" not in line:
            found.append(line)
    return found


@whole_session
async def test_the_user_configs_servers_tools_run_between_the_models_calls(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    mark = tmp_path / "starts.txt"
    user_config(
        f'[mcp_servers.glossary]\ncommand = "{sys.executable}"\n'
        f'args = ["{GLOSSARY}", "--starts", "{mark}"]\n'
        '[mcp_servers.gone]\ncommand = "/no/such/mcp-server"\n'
    )
    scripted_server.script(
        Reply(tool_calls=[("glossary__lookup_term", {"term": "sub"})]),
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB),
    )
    out = io.StringIO()
    result, seen = await run_headless(
        make_repo(), "add sub", scripted_server.base_url, sink=ProgressPrinter(out)
    )
    assert result.outcome == "done" and len(result.commits) == 1
    (started,) = seen.of(ev.ToolCallStarted)
    (finished,) = seen.of(ev.ToolCallFinished)
    assert (started.server, started.tool, started.purpose, started.kind) == (
        "glossary", "lookup_term", "plan", "read"
    )  # fmt: skip
    assert finished.ok and finished.result.startswith("sub: subtraction")
    # The plan call's second request carried the result.
    assert scripted_server.chat_requests[1].messages[-1]["role"] == "tool"
    printed = out.getvalue()
    assert '✓ tool glossary.lookup_term({"term": "sub"}) for the plan call' in printed
    assert printed.count("MCP server gone (/no/such/mcp-server) did not start") == 1
    assert "program not found" in printed
    assert servers_running(mark) == []
    assert mark.read_text().splitlines() == ["started"]
