"""The model can ask to see more of a file (`<<<<<<< SHOW path:120-260`, docs/protocol.md)
before it edits: the engine answers with numbered lines, within the context window and a bounded
number of rounds, refuses hostile paths with a reason, and every round is recorded and shown."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import KEY, big_module, big_repo_files, edit, run_headless
from tests.scripted_server import RecordedRequest, Reply, ScriptedServer
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tests.tiers import whole_session
from tui_engineer.context.show import ShowRequest, find_symbol, parse_show_requests
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

LINES = 6_000
BUG_AT = 4_980  # where `scale` is: far past what the first prompt shows of the file


@pytest.fixture
def big_repo(make_repo, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    module = big_module(LINES, BUG_AT, ["def scale(x):", "    return x * 3"])
    more = {"calc.py": "def add(a, b):\n    return a + b\n", ".gitignore": ".env\n"}
    return make_repo(big_repo_files(module, more))


def last_user(request: RecordedRequest) -> str:
    return request.messages[-1]["content"]


FIX = edit("big.py", "def scale(x):\n    return x * 3\n", "def scale(x):\n    return x * 2\n")


def sees_scale(request: RecordedRequest) -> Reply:
    """A careful model: it edits only once it has seen the lines it must change."""
    shown = last_user(request)
    if f"{BUG_AT} | def scale(x):" in shown and f"{BUG_AT + 1} |     return x * 3" in shown:
        return Reply(text=f"Now I can see it.\n\n{FIX}")
    return Reply(text="I cannot see scale; no edit.")


@whole_session
async def test_the_model_asks_for_a_region_of_a_6000_line_file_then_edits_it(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    def asks(request: RecordedRequest) -> Reply:
        first = last_user(request)
        # The file's head and the map's one line for scale (context/), not scale's body; the
        # prompt says which lines it shows and how to see more.
        assert "return x * 3" not in first
        assert re.search(r"big\.py lines 1-\d+ of 6000 \(the top of the file", first)
        assert re.search(r"Lines \d+-6000 of big\.py are not shown.*SHOW big\.py:\d+-", first)
        assert "# Seeing more of a file" in request.messages[0]["content"]
        return Reply(text="scale is further down.\n\n<<<<<<< SHOW big.py:4975-4990\n")

    scripted_server.script(asks, sees_scale)
    url = scripted_server.base_url
    # The request names no function, so the prompt shows big.py from its top (context/).
    result, seen = await run_headless(big_repo, "fix the multiplier in big.py", url, plan=False)
    assert result.outcome == "done" and len(result.commits) == 1
    assert "return x * 2" in (big_repo / "big.py").read_text()
    answer = last_user(scripted_server.chat_requests[1])
    assert "big.py lines 4975-4990 of 6000" in answer
    assert "4974 |" not in answer and "4991 |" not in answer  # just what was asked
    [shown] = seen.of(ev.ShowRequested)
    assert (shown.asked, shown.round, shown.max_rounds) == (("big.py:4975-4990",), 1, 3)
    assert shown.lines == 16 and shown.refused == ()
    record = next((big_repo / ".tui-engineer" / "runs").glob("*.jsonl")).read_text()
    assert '"type": "show_requested"' in record


@whole_session
async def test_a_symbol_can_be_asked_for_by_name(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    scripted_server.script(Reply(text="<<<<<<< SHOW `big.py::scale`"), sees_scale)
    url = scripted_server.base_url
    result, _ = await run_headless(big_repo, "make scale double", url, plan=False)
    assert result.outcome == "done"
    answer = last_user(scripted_server.chat_requests[1])
    assert "big.py::scale (lines 4980-4981 of 6000)" in answer


@whole_session
async def test_the_round_trip_is_bounded(big_repo: Path, scripted_server: ScriptedServer) -> None:
    """A model that only ever asks: 3 answered rounds per reply, then it is told to edit."""
    asked = iter(range(1, 100))
    scripted_server.script(
        *[lambda r: Reply(text=f"<<<<<<< SHOW big.py:{next(asked)}-{LINES}") for _ in range(8)]
    )
    result, seen = await run_headless(
        big_repo, "make scale double", scripted_server.base_url, plan=False, max_fix_attempts=1,
        show_lines=50,
    )  # fmt: skip
    assert result.outcome != "done" and result.commits == []
    # propose + 3 rounds, then (told the rounds are used up) one fix + 3 rounds: 8 calls.
    requests = scripted_server.chat_requests
    assert len(requests) == 8
    rounds = seen.of(ev.ShowRequested)
    assert [r.round for r in rounds] == [1, 2, 3, 1, 2, 3]
    assert "all 3 SHOW rounds" in last_user(requests[4])
    # show_lines caps each answer, and says what was left out.
    answer = last_user(requests[1])
    assert "big.py lines 1-50 of 6000" in answer and "51 |" not in answer
    assert "big.py:51-6000" in answer  # how to ask for the rest


@whole_session
async def test_hostile_and_secret_paths_are_refused_with_a_reason(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    (big_repo.parent / "outside.txt").write_text("OUTSIDE-SECRET\n")
    (big_repo / ".env").write_text("API_TOKEN=ENV-SECRET\n")  # ignored by the repo's .gitignore
    (big_repo / "link.txt").symlink_to(big_repo.parent / "outside.txt")
    git(big_repo, "add", "link.txt")
    git(big_repo, "commit", "-qm", "link")
    hostile = ("../outside.txt", ".git/config", ".env", "link.txt", "/etc/passwd", "nope.py")
    ask = "\n".join(f"<<<<<<< SHOW {path}" for path in hostile)
    scripted_server.script(Reply(text=ask), Reply(text=FIX))
    url = scripted_server.base_url
    result, seen = await run_headless(big_repo, "make scale double", url, plan=False)
    assert result.outcome == "done"
    answer = last_user(scripted_server.chat_requests[1])
    for path in hostile:
        assert f"SHOW {path}: refused" in answer or f"SHOW {path}: not shown" in answer, path
    assert "`..`" in answer and "ignored by git" in answer and "does not exist" in answer
    everything = json.dumps([r.body for r in scripted_server.requests])
    assert "OUTSIDE-SECRET" not in everything and "ENV-SECRET" not in everything
    [shown] = seen.of(ev.ShowRequested)
    assert len(shown.refused) == 6 and shown.lines == 0


@whole_session
async def test_an_answer_fits_the_context_window(
    big_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small window: the answer is cut to what fits, and the next call is still made."""
    with ScriptedServer(context_window=4096) as server:
        server.script(Reply(text="<<<<<<< SHOW big.py:4000-5000"), sees_scale, Reply(text=FIX))
        result, _ = await run_headless(
            big_repo, "make scale double", server.base_url, plan=False, show_lines=1000,
            context_budget=512,
        )  # fmt: skip
        second = server.chat_requests[1]
    total = sum(len(m["content"]) for m in second.messages)
    assert total // 4 < 4096  # the scripted server would have refused an overflow
    answer = last_user(second)
    assert "big.py lines 4000-" in answer and "context window" in answer
    assert result.outcome == "done"


@whole_session
async def test_the_tui_chat_says_what_the_model_asked_to_see(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    from tests.tui.app_support import SIZE, make_app, reviewing, wait_for
    from tests.tui.test_app_session import chat_text

    scripted_server.script(Reply(text="<<<<<<< SHOW big.py:4975-4990"), sees_scale)
    app = make_app(big_repo, scripted_server.base_url, "make scale double", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, reviewing(app, 1))
        assert "Model asked to see big.py:4975-4990 (round 1/3): 16 lines shown." in chat_text(app)
        await pilot.press("q")


def test_progress_says_what_the_model_asked_to_see() -> None:
    out = io.StringIO()
    printer = ProgressPrinter(out)
    printer(
        ev.ShowRequested(
            step=1, attempt=0, round=1, max_rounds=3, asked=("more.py:4980-5060",),
            shown=("more.py:4980-5060",), refused=(), lines=81,
        )
    )  # fmt: skip
    assert "model asked to see more.py:4980-5060 (round 1/3, 81 lines shown)" in out.getvalue()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("<<<<<<< SHOW more.py:120-260", [ShowRequest("more.py", 120, 260)]),
        ("SHOW `more.py:120–260`", [ShowRequest("more.py", 120, 260)]),  # en dash, backticks
        ("  <<<<<<<SHOW more.py:L120-L260  ", [ShowRequest("more.py", 120, 260)]),
        ("SHOW more.py lines 120-260", [ShowRequest("more.py", 120, 260)]),
        ("SHOW more.py#L120-L260", [ShowRequest("more.py", 120, 260)]),
        ("SHOW pkg/more.py:120", [ShowRequest("pkg/more.py", 120, None)]),
        ("SHOW pkg/more.py::Chunker.split", [ShowRequest("pkg/more.py", symbol="Chunker.split")]),
        ("SHOW **README.md**", [ShowRequest("README.md")]),
        ("```\nSHOW a.py:1-2\nSHOW b.py\n```", [ShowRequest("a.py", 1, 2), ShowRequest("b.py")]),
        ("Please SHOW me more.py", []),  # prose: SHOW must start the line
        ("show more.py:1-2", []),  # upper case only
        ("```sql\nSHOW TABLES;\nSHOW COLUMNS FROM users\n```", []),  # not paths
        ("<<<<<<< SHOW Makefile", [ShowRequest("Makefile")]),  # with the marker: any name
    ],
)
def test_show_lines_are_parsed_forgivingly(reply: str, expected: list[ShowRequest]) -> None:
    assert [(r.path, r.start, r.end, r.symbol) for r in parse_show_requests(reply)] == [
        (r.path, r.start, r.end, r.symbol) for r in expected
    ]


def test_the_label_is_the_tidy_form_of_what_was_asked() -> None:
    [request] = parse_show_requests("SHOW ./big.py : 10 - 20")
    assert request.label == "big.py:10-20"


@whole_session
async def test_a_recorded_session_with_show_rounds_replays(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    scripted_server.script(Reply(text="<<<<<<< SHOW big.py::scale"), sees_scale)
    url = scripted_server.base_url
    await run_headless(big_repo, "make scale double", url, plan=False)
    record = next((big_repo / ".tui-engineer" / "runs").glob("*.jsonl"))
    git(big_repo, "reset", "-q", "--hard", "HEAD~1")
    result, seen = await run_headless(big_repo, "make scale double", url, plan=False, replay=record)
    assert result.outcome == "done" and len(result.commits) == 1
    assert [e.asked for e in seen.of(ev.ShowRequested)] == [("big.py::scale",)]


@whole_session
async def test_show_rounds_0_neither_teaches_nor_answers_show(
    big_repo: Path, scripted_server: ScriptedServer
) -> None:
    scripted_server.script(Reply(text="<<<<<<< SHOW big.py::scale"), Reply(text=FIX))
    url = scripted_server.base_url
    result, seen = await run_headless(big_repo, "make scale double", url, plan=False, show_rounds=0)
    assert result.outcome == "done"
    first, second = scripted_server.chat_requests
    assert "SHOW" not in first.messages[0]["content"]  # the system prompt
    assert "contained no edit blocks" in last_user(second)
    assert seen.of(ev.ShowRequested) == []


def test_a_symbol_is_found_by_the_repository_maps_parser_in_any_mapped_language() -> None:
    """SHOW path::name uses the same tree-sitter symbols as the map: decorators included, a
    bare method name finds `Class.method`, and TypeScript works as well as Python."""
    python = "import functools\n\n\nclass Box:\n    @functools.cache\n    def size(self):\n"
    python += "        return 1\n"
    assert find_symbol("box.py", python, "size") == ((5, 7), ["Box", "Box.size"])
    script = "export class Cart {\n  total(): number {\n    return 0;\n  }\n}\n"
    span, known = find_symbol("cart.ts", script, "Cart.total")
    assert span == (2, 4) and "Cart.total" in known
    assert find_symbol("notes.rb", "def greet\n  puts 'hi'\nend\n", "greet")[0] == (1, 3)
