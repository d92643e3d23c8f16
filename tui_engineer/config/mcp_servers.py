"""`[mcp_servers]`: the MCP servers whose tools the model may use, from the user's config only.

The shape is Codex's (`[mcp_servers.NAME]` with `command`, `args`, `env`; or `url` for a
server over streamable HTTP), so a table copied from ~/.codex/config.toml works as it is.

A repository's config may not add one: a server is a program that runs on the user's machine,
outside the sandbox, with the user's rights; a cloned repository naming one would run code
unasked (the rule that a repository cannot widen containment). Its table is ignored and the
session says so (`ignored_notice`). The user's table is read by config/mcp_table.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

TABLE = "mcp_servers"


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server: a command started over stdio, or the URL of a streamable HTTP one."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # on top of the SDK's default environment
    url: str = ""
    origin: str = ""  # where it was given: the user config, or the editor (ACP)
    headers: tuple[tuple[str, str], ...] = field(default=())  # HTTP ones

    @property
    def shown(self) -> str:
        """How the user knows it: its name and what runs it."""
        what = self.url or " ".join((self.command, *self.args))
        return f"{self.name} ({what})"


def ignored_notice(origin: str, table: object) -> str:
    """Said at the session's start when a repository's config names MCP servers."""
    names = ", ".join(str(n) for n in table) if isinstance(table, Mapping) else ""
    return (
        f"Ignored [{TABLE}] in {origin}{f' ({names})' if names else ''}: a repository's config "
        "may not start MCP servers — they run on your machine outside the sandbox. Add the ones "
        "you trust to your own user config."
    )
