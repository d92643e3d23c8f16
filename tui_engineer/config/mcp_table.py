"""Reading the user config's `[mcp_servers]` table (config/mcp_servers.py says what it is)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from tui_engineer.config.mcp_servers import TABLE, McpServerConfig
from tui_engineer.config.settings import ConfigError

_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")


def servers_from_table(table: object, origin: str) -> tuple[McpServerConfig, ...]:
    """The `[mcp_servers]` table of the user's config, checked: problems name the server."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{origin} [{TABLE}]: must be a table of servers ([{TABLE}.NAME])")
    return tuple(_server(name, spec, f"{origin} [{TABLE}.{name}]") for name, spec in table.items())


def _server(name: str, spec: object, origin: str) -> McpServerConfig:
    if not _NAME.fullmatch(name):
        raise ConfigError(f"{origin}: a server's name is letters, digits, '-' and '_' (≤ 40)")
    if not isinstance(spec, Mapping):
        raise ConfigError(f"{origin}: must be a table with command (and args, env) or url")
    unknown = set(spec) - {"command", "args", "env", "url", "headers", "http_headers"}
    if unknown:
        raise ConfigError(f"{origin}: unknown key(s) {', '.join(sorted(unknown))}")
    command, url = spec.get("command", ""), spec.get("url", "")
    if not isinstance(command, str) or not isinstance(url, str) or bool(command) == bool(url):
        raise ConfigError(f'{origin}: give either command = "program" or url = "https://…"')
    args = spec.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{origin}: args must be a list of strings")
    env = _strings(spec.get("env", {}), origin, "env")
    headers = _strings(spec.get("headers", spec.get("http_headers", {})), origin, "headers")
    return McpServerConfig(name, command, tuple(args), env, url, f"user config {origin}", headers)


def _strings(table: object, origin: str, key: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise ConfigError(f'{origin}: {key} must be a table of strings (NAME = "value")')
    return tuple(table.items())
