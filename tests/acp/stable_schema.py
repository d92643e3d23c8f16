"""A client that reads the agent strictly against the protocol's stable schema, as the Rust SDK
does: a `sessionUpdate` variant or a method the stable schema lacks is rejected (the Rust SDK
answers it with a parse error, and a one-shot client built on it ends the session). Everything
else is checked against the Python SDK's models, as `SchemaCheck` does."""

from __future__ import annotations

from typing import Any

from tests.acp.acp_support import SchemaCheck

# The stable schema's `SessionUpdate` variants (schema/schema.json of the protocol, v1), the list
# the Rust SDK names when it rejects another one.
STABLE_UPDATES = {
    "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call",
    "tool_call_update", "plan", "available_commands_update", "current_mode_update",
    "config_option_update", "session_info_update",
}  # fmt: skip
# What an agent may send a client in the stable schema.
STABLE_METHODS = {
    "session/update", "session/request_permission", "fs/read_text_file", "fs/write_text_file",
    "terminal/create", "terminal/output", "terminal/release", "terminal/wait_for_exit",
    "terminal/kill",
}  # fmt: skip


class StableSchemaCheck(SchemaCheck):
    """`SchemaCheck` that first rejects what the stable schema does not have."""

    def _check(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is not None:
            assert method in STABLE_METHODS, f"unknown method `{method}`"
        if method == "session/update":
            variant = message["params"]["update"].get("sessionUpdate")
            assert variant in STABLE_UPDATES, f"unknown variant `{variant}`"
        super()._check(message)
