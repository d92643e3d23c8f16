"""What a session is asked to do (`RunOptions`): its own light module, so a front end can build
one without importing the engine (the app paints first, the engine loads behind it)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_engineer.config.mcp_servers import McpServerConfig


@dataclass
class RunOptions:
    request: str
    repo: Path
    flags: dict[str, object]
    plan: bool = True
    diagnose: bool = True  # a separate diagnosis call before each fix
    allow_dirty: bool = False
    record: bool = True
    replay: Path | None = None
    # Without a test command: "" refuses to start (NoTestCommand), "write" has the first step
    # write the tests (test-first, run with WRITE_TESTS_COMMAND), "unverified" runs no tests.
    no_tests: str = ""
    # The session's id (its run record's name), when a front end names it before it starts (an
    # ACP client is told it at session/new); "" makes a new one.
    session_id: str = ""
    # A later request in an editor's session (ACP): that session's id, said in the record so
    # session/load finds this run with it (session/resume.py, `session_parts`).
    part_of: str = ""
    # Go on with a recorded session (session/resume.py): its id, "" for the newest one; None
    # starts a new session.
    resume: str | None = None
    # MCP servers a front end was handed (an editor's, in ACP's session/new), on top of the
    # user config's [mcp_servers]: their tools are offered to the model (mcp_tools/).
    mcp_servers: tuple[McpServerConfig, ...] = ()

    def __post_init__(self) -> None:
        self.request = readable_text(self.request)


def readable_text(text: str) -> str:
    """`text` with every byte that was not UTF-8 shown as U+FFFD. Python hands such argv bytes
    over as lone surrogates, which nothing downstream can encode (the record, the request to
    the server, the terminal); the user meant a character, so show that one was there."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
