"""The user's MCP servers (their own user config's [mcp_servers], or those an editor hands over
in ACP's session/new), started for a session on the official `mcp` SDK, their tools offered to
the model (engine/tool_use.py). `start_tools` is what the session's start-up calls
(session/run.py); the package is named so it does not shadow the SDK's `mcp`."""

from tui_engineer.mcp_tools.toolbox import McpTools, start_tools

__all__ = ["McpTools", "start_tools"]
