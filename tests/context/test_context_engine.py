"""The context engine end to end: the propose prompt holds the function a request names from a
6,000-line file (not the file's head), the model's SEARCH copied from that region applies, and a
fix prompt holds the code at the failing traceback frame. Real engine, real openai client over
HTTP to the scripted server, real git and pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine_support import KEY, big_module, big_repo_files, edit, run_headless
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer
from tests.tiers import whole_session

pytest.importorskip("tree_sitter_python", reason="the map needs the tree-sitter grammars")

LINES = 6_000
AT = 5_000  # where `scale` is defined


@pytest.fixture
def big_repo(make_repo, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scale = ["def scale(x):", '    """Scale by the factor."""', "    return x * 3", ""]
    return make_repo(big_repo_files(big_module(LINES, AT, scale)))


def prompt(request: RecordedRequest) -> str:
    return request.messages[-1]["content"]


@whole_session
async def test_the_propose_prompt_holds_the_named_function_of_a_6000_line_file(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    def edits_what_it_sees(request: RecordedRequest) -> Reply:
        shown = prompt(request)
        assert f"big.py lines {AT}-{AT + 2} of {LINES} (def scale(x))" in shown
        # The model copies the lines as shown: no line numbers to strip.
        start = shown.index("```python\ndef scale(x):\n") + len("```python\n")
        copied = shown[start : shown.index("```", start)]
        return Reply(text=edit("big.py", copied, copied.replace("x * 3", "x * 2")))

    scripted_server.script(edits_what_it_sees)
    url = scripted_server.base_url
    result, _ = await run_headless(big_repo, "make scale double its input", url, plan=False)
    assert result.outcome == "done" and len(result.commits) == 1
    assert "    return x * 2\n" in (big_repo / "big.py").read_text()
    first = prompt(scripted_server.chat_requests[0])
    assert "VALUE_100 = 100" not in first  # not the file's head
    assert len(first) < 12_000  # a 6,000-line file, and the prompt is small


@whole_session
async def test_the_plan_prompt_maps_the_symbol_too(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    fix = edit("big.py", "    return x * 3\n", "    return x * 2\n")
    plan = '```json\n{"steps": [{"title": "Double scale", "files": ["big.py"]}]}\n```'
    scripted_server.script(Reply(text=plan), Reply(text=fix))
    result, _ = await run_headless(
        big_repo, "make scale double its input", scripted_server.base_url
    )
    assert result.outcome == "done"
    planning = prompt(scripted_server.chat_requests[0])
    assert f"big.py ({LINES:,} lines) — defines scale" in planning  # the map
    assert "def scale(x):\n" in planning


@whole_session
async def test_the_fix_prompt_holds_the_code_at_the_failing_line(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    wrong = edit("big.py", "    return x * 3\n", "    return x * 4\n")
    right = edit("big.py", "    return x * 4\n", "    return x * 2\n")
    scripted_server.script(Reply(text=wrong), Reply(text="x * 4 is wrong"), Reply(text=right))
    url = scripted_server.base_url
    # test_scale is red before the session: named in the request, it is the step's to fix.
    request = "make scale double its input so test_scale passes"
    result, _ = await run_headless(big_repo, request, url, plan=False)
    assert result.outcome == "done"
    fixing = prompt(scripted_server.chat_requests[2])
    assert "The code at the failing lines" in fixing
    # The failing assertion's frame, then the function it calls, as it is after the first edit.
    assert "tests/test_big.py lines 4-5 of 5 (traceback line 5, in test_scale)" in fixing
    called = f"big.py lines {AT}-{AT + 2} of {LINES} (def scale(x), called on the failing line)"
    assert called in fixing
    assert "    return x * 4\n" in fixing


@whole_session
async def test_a_small_window_gets_a_smaller_context(big_repo: Path) -> None:
    with ScriptedServer(context_window=4096) as server:
        server.script(Reply(text=edit("big.py", "    return x * 3\n", "    return x * 2\n")))
        result, _ = await run_headless(
            big_repo, "make scale double its input", server.base_url, plan=False
        )
        sent = server.chat_requests[0]
    assert result.outcome == "done"
    assert sum(len(m["content"]) for m in sent.messages) // 4 < 4096 - 1024
    assert "def scale(x):" in prompt(sent)
