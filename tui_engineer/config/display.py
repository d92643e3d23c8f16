"""Show the effective settings as a table for `tui-engineer config` (never the API key)."""

from __future__ import annotations

from tui_engineer.config.fields import FIELDS
from tui_engineer.config.settings import LoadedSettings, Settings

VALUE_WIDTH = 44  # longer values overflow rather than push every source off screen


def mask_secret(secret: str) -> str:
    """Enough to tell two keys apart, never enough to use one; short keys are hidden whole."""
    if len(secret) < 16:
        return "hidden"
    return f"{secret[:3]}…{secret[-4:]}"


def _value_text(key: str, value: object, loaded: LoadedSettings) -> str:
    settings: Settings = loaded.settings
    if key == "api_key":
        if value is None:
            return f"not set — export {settings.api_key_env}=…"
        return f"set ({mask_secret(str(value))}, from {loaded.sources[key]})"
    if value is None:
        return FIELDS[key].when_none or "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = f"{value:g}" if isinstance(value, float) else str(value)
    unit = FIELDS[key].unit
    return f"{text} {unit}" if unit else text


def format_settings(loaded: LoadedSettings) -> str:
    """A key / value / source table, then the config files read."""
    rows = [("key", "value", "source")]
    for key, value in vars(loaded.settings).items():
        source = loaded.sources.get(key, "default")
        rows.append((key, _value_text(key, value, loaded), source))
    key_width = max(len(r[0]) for r in rows)
    value_width = min(VALUE_WIDTH, max(len(r[1]) for r in rows))
    lines = [f"{k:<{key_width}}  {v:<{value_width}}  {s}".rstrip() for k, v, s in rows]
    return "\n".join(lines + [""] + _files_lines(loaded))


def _files_lines(loaded: LoadedSettings) -> list[str]:
    lines = ["Files read:"]
    lines += [f"  {path}" for path in loaded.files_read] or ["  none"]
    user = loaded.user_config
    if user is not None and user not in loaded.files_read:
        lines.append(f"User config (not found; create it to set personal defaults): {user}")
    return lines + _agents_lines(loaded) + _mcp_lines(loaded)


def _mcp_lines(loaded: LoadedSettings) -> list[str]:
    """The user config's MCP servers (never their env: it holds tokens), and a repository's
    that are ignored."""
    lines = [f"MCP server: {server.shown}" for server in loaded.mcp_servers]
    return lines + list(loaded.mcp_notices)


def _agents_lines(loaded: LoadedSettings) -> list[str]:
    """What the repository's AGENTS.md gave: its conventions (for the model) and test command."""
    agents = loaded.agents
    if agents is None:
        return []
    command = agents.test_command or "none named"
    told = f"{len(agents.conventions):,} characters of conventions for the model"
    lines = [f"Agent instructions: {agents.path}", f"  {told}; test command: {command}"]
    if agents.cut:
        lines.append(f"  {agents.cut_notice()}")
    return lines
