"""A session in a repository with an AGENTS.md: its conventions are in the system message of
every model call, its test command is the one that runs (said, with where it came from), and a
long file is cut, with a notice. Real engine, real HTTP to the scripted server, real pytest."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES, git
from tests.engine_support import SUB, edit, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.config.agents_md import MAX_CHARS
from tui_engineer.engine import events as ev

RULE = "House rule: every function gets a one-line docstring."
AGENTS = f"""# How to work here

{RULE}

## Running the tests

```sh
python -m pytest -x tests
```
"""
SUB_BUGGY = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
) + edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_sub():\n    from calc import sub\n"
    "    assert sub(5, 3) == 2\n",
)


pytestmark = pytest.mark.usefixtures("api_key")


def notices(seen) -> list[str]:
    return [n.message for n in seen.of(ev.Notice)]


@whole_session
async def test_conventions_reach_every_call_and_its_test_command_runs(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo: Path = make_repo({**SAMPLE_FILES, "AGENTS.md": AGENTS})
    scripted_server.script(
        Reply(text=plan_reply("Add sub")),
        Reply(text=SUB_BUGGY),
        Reply(text="sub adds instead of subtracting."),
        Reply(
            text=edit(
                "calc.py",
                "def sub(a, b):\n    return a + b\n",
                "def sub(a, b):\n    return a - b\n",
            )
        ),
    )
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    assert git(repo, "log", "-1", "--format=%s") == "Add sub"
    calls = scripted_server.chat_requests
    assert len(calls) == 4  # plan, propose, diagnose, fix
    for call in calls:
        assert call.messages[0]["role"] == "system"
        assert RULE in call.messages[0]["content"]
    assert {s.command for s in seen.of(ev.TestsStarted)} == {"python -m pytest -x tests"}
    assert any("python -m pytest -x tests" in n and "from AGENTS.md" in n for n in notices(seen)), (
        notices(seen)
    )


@whole_session
async def test_a_long_agents_md_is_cut_and_the_user_is_told(
    make_repo, scripted_server: ScriptedServer
) -> None:
    rules = "".join(f"- rule {n}: keep functions short\n" for n in range(600))
    repo: Path = make_repo({**SAMPLE_FILES, "AGENTS.md": f"{RULE}\n{rules}LAST RULE\n"})
    scripted_server.script(Reply(text=plan_reply("Add sub")), Reply(text=SUB))
    result, seen = await run_headless(repo, "add sub", scripted_server.base_url)

    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    for call in scripted_server.chat_requests:
        system = call.messages[0]["content"]
        assert RULE in system and "LAST RULE" not in system
    assert any("AGENTS.md" in n and f"{MAX_CHARS:,}" in n for n in notices(seen)), notices(seen)
