"""A session fed the reply shapes real models write (issue 21), through the real openai client to
the scripted server: a fenced whole file with no markers is refused with a message teaching the
FILE block, a unified diff is applied, and the run record says which shape every reply had."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.engine_support import run_headless
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tui_engineer.bench.results import RunResult, count_events
from tui_engineer.engine import events as ev

WHOLE_FILE = (
    "Sure! Here is the updated calc.py:\n\n```python\ndef add(a, b):\n    return a + b\n\n\n"
    "def sub(a, b):\n    return a - b\n```\n"
)
DIFF = (
    "```diff\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,6 @@\n def add(a, b):\n     return a + b\n"
    "+\n+\n+def sub(a, b):\n+    return a - b\n```\n"
)


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_unmarked_whole_file_is_taught_then_a_diff_applies(make_repo, scripted_server):
    repo = make_repo()
    scripted_server.script(Reply(text=WHOLE_FILE), Reply(text=DIFF))
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)

    taught = scripted_server.chat_requests[1].messages[-1]["content"]
    assert "`calc.py` in a fenced block without edit markers" in taught
    assert "<<<<<<< FILE" in taught
    assert result.exit_code == 0
    assert "def sub(a, b):\n    return a - b\n" in (repo / "calc.py").read_text()
    assert git(repo, "log", "--format=%s", "-1") == "add sub"

    refused, applied = seen.of(ev.EditRefused), seen.of(ev.EditsApplied)
    assert [(e.shape, e.shape_details) for e in refused] == [("fenced-code", ())]
    assert [e.shape for e in applied] == ["unified-diff"]
    record = next((repo / ".tui-engineer" / "runs").glob("*.jsonl")).read_text()
    shapes = [json.loads(line).get("shape") for line in record.splitlines()]
    assert [s for s in shapes if s] == ["fenced-code", "unified-diff"]

    counted = RunResult("t", "c", 0)  # what a bench makes of the same run
    count_events(counted, seen.events)
    assert counted.shapes == {"fenced-code": 1, "unified-diff": 1}
    assert (counted.edits_ok, counted.edits_refused, counted.malformed) == (1, 1, 1)
