"""A proxy's or gateway's error page (HTML, status 200) in the middle of a session is retried
like a 502/503 and said, and the session goes on (issue 48, part 4): a two-call session whose
second call first gets one such page commits. The real openai client over real HTTP to the
scripted server; a real git repository and its real pytest."""

from __future__ import annotations

import io

import pytest

from tests.conftest import git
from tests.engine_support import SUB, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter

pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_one_error_page_on_the_second_call_does_not_end_the_session(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("add sub")), Reply(html_page=True), Reply(text=SUB)
    )
    out = io.StringIO()
    result, seen = await run_headless(
        repo, "add sub", scripted_server.base_url, sink=ProgressPrinter(out)
    )
    assert result.exit_code == 0, result.message
    assert [r.reason for r in seen.of(ev.ModelRetried)] == [
        "an HTML error page from a proxy or gateway"
    ]
    said = (
        "↻ the propose reply was broken (an HTML error page from a proxy or gateway): asked again"
    )
    assert said in out.getvalue()
    assert "def sub" in git(repo, "show", "HEAD:calc.py")
    assert len(scripted_server.chat_requests) == 3
