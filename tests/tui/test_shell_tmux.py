"""The shell beside the chat in a real terminal: tmux runs the installed `tui-engineer` against
the scripted model server; `!python -c "print(1)"` is typed as a user types it, the Shell pane
is read back with capture-pane, `y` attaches the output, the chat shows the 📎 line, and the
answer to "What is still wrong?" takes it to the model's next call."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.engine_support import DIV, KEY, SUB, plan_reply
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.tui.test_demo_tmux import TmuxPane, pane  # noqa: F401 (fixture)

COMMAND = 'python -c "print(1)"'


def installed() -> list[str]:
    """`tui-engineer`: the console script beside this Python (this checkout's code)."""
    script = Path(sys.executable).parent / "tui-engineer"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tui_engineer"]


def _box_holds(text: str):
    """The chat box (its lines drawn between ▊ and ▎) holds `text` and nothing else."""
    return lambda screen: any(
        line.startswith("▊") and line.strip("▊▎ ") == text for line in screen.splitlines()
    )


def _right_lines(screen: str) -> list[str]:
    return [line.rsplit("││", 1)[-1].strip(" │") for line in screen.splitlines() if "││" in line]


def _right_column(screen: str) -> str:
    """The right-hand column (Chat, then Shell) as one text, its wrapped lines joined."""
    return " ".join(" ".join(_right_lines(screen)).split())


@whole_session
def test_a_command_typed_in_the_chat_is_shown_in_the_shell_pane_and_sent_with_y(
    make_repo,
    scripted_server: ScriptedServer,
    pane: TmuxPane,  # noqa: F811 (the fixture)
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    repo = make_repo()
    scripted_server.script(
        Reply(text=plan_reply("Add sub")), Reply(text=SUB),
        Reply(text=plan_reply("Add div")), Reply(text=DIV),
    )  # fmt: skip
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the tmux server passes on this environment
    app = [*installed(), "add sub", "--base-url", scripted_server.base_url]
    app += ["--model", "test-model", "--full-tests-always", "--no-pipeline"]
    pane.start(
        f'cd {shlex.quote(str(repo))} && {shlex.join(app)}; echo "app exited $?"; sleep 600',
        (130, 40),
    )
    pane.wait_text("1. Add sub", "awaiting review")

    # `!` from the review: the chat box, `!` typed in it; the command as a user types it.
    pane.keys("!")
    pane.wait("the chat box to hold the !", _box_holds("!"))  # typed before, it is replaced
    pane.type(COMMAND)
    pane.keys("Enter")
    shown = pane.wait_text("exit status 0 — y sends it")  # the Shell pane's head
    # Chat and Shell share the right-hand column: read it alone, its wrapped lines joined.
    right = _right_lines(shown)
    at = right.index(f"$ {COMMAND}")
    assert right[at + 1 : at + 3] == ["1", "[exit status 0]"], shown
    said = f"$ {COMMAND} — exit status 0, 1 lines: y in the Shell pane sends it to the model."
    pane.wait("the chat's line for the command", lambda screen: said in _right_column(screen))

    pane.keys("y")  # the Shell pane has the focus after its command
    pane.wait(
        "the attachment's line in the chat",
        lambda screen: (
            f"📎 $ {COMMAND} (exit status 0, 1 lines of output, the tail sent)"
            in _right_column(screen)
        ),
    )
    assert len(scripted_server.chat_requests) == 2  # nothing sent yet: it goes with the next

    pane.keys("Escape")  # y left the chat box focused: back to the review keys
    pane.decide("a")
    pane.wait_text("What is still wrong?")
    pane.type("division is missing")
    pane.keys("Enter")
    pane.wait_text("2. Add div", "awaiting review")
    answer = str(scripted_server.chat_requests[2].messages)
    assert "division is missing" in answer
    assert "The human ran this command in the repository (exit status 0)" in answer
    assert f"$ {COMMAND}" in answer.replace('\\"', '"')

    pane.decide("a")
    pane.wait_text("What is still wrong?")
    pane.keys("Enter")  # empty: done
    pane.wait_text("How did it go?")
    pane.keys("BTab", "Down", "Down", "Enter", "Tab")  # "It works", as the demo walk says it
    pane.type("the shell works in tmux")
    pane.keys("Enter")
    pane.wait_text("finished: done")
    pane.keys("q")
    pane.wait_text("app exited 0")
