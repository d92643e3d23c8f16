"""Every model call is bounded: it carries a reply limit for its kind, from config."""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.engine_support import MUL_BUGGY, SUB, edit, plan_reply, run_headless
from tests.scripted_server import Reply
from tests.tiers import whole_session

pytestmark = pytest.mark.usefixtures("api_key")


def limits(server) -> list[int | None]:
    return [(r.body or {}).get("max_completion_tokens") for r in server.chat_requests]


@whole_session
async def test_every_call_carries_the_reply_limit_of_its_kind(make_repo, scripted_server):
    fix = edit("calc.py", "    return a + b  # x\n", "    return a * b\n")
    scripted_server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=MUL_BUGGY),
        Reply(text="mul adds instead of multiplying."),
        Reply(text=fix),
    )
    result, _ = await run_headless(make_repo(), "add sub and mul", scripted_server.base_url)
    assert result.exit_code == 0, result.message
    # plan, propose, propose, diagnose, fix with the defaults of each kind
    assert limits(scripted_server) == [2048, 8192, 8192, 1024, 8192]


@whole_session
async def test_the_limits_come_from_config(make_repo, scripted_server):
    repo = make_repo()
    (repo / ".tui-engineer.toml").write_text("reply_tokens_propose = 600\n")
    git(repo, "add", ".tui-engineer.toml")
    git(repo, "commit", "-qm", "config")
    scripted_server.script(Reply(text=SUB))
    result, _ = await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert result.exit_code == 0, result.message
    assert limits(scripted_server) == [600]


@whole_session
async def test_a_token_budget_smaller_than_the_reply_limit_shrinks_the_reply(
    make_repo, scripted_server
):
    scripted_server.script(Reply(text=SUB, usage=(900, 200)))
    result, _ = await run_headless(
        make_repo(), "add sub", scripted_server.base_url, plan=False, max_tokens=3000
    )
    assert result.exit_code == 0, result.message  # not refused for the 8,192 default
    [limit] = limits(scripted_server)
    assert limit is not None and 256 <= limit < 3000
