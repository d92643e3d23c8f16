"""A one-shot ACP client on an older release of the Python SDK (0.7.1, from before the
`usage_update` proposal), run with that release's Python: `python old_sdk_client.py REPO AGENT
ARGS…`. It runs "add sub and mul" accepting every permission request, then "done". A
notification its SDK cannot read (that release drops it silently; read here with the release's
own models as it arrives), an error its SDK logs, or any failed call ends it with exit 1."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from acp import RequestPermissionResponse, spawn_agent_process, text_block
from acp.connection import StreamDirection
from acp.schema import AllowedOutcome, SessionNotification


class Problems(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(record.getMessage())


def reads_updates(problems: Problems):
    """A stream observer: each `session/update` read with this release's models."""

    def observe(event) -> None:
        message = event.message
        if event.direction != StreamDirection.INCOMING or message.get("method") != "session/update":
            return
        try:
            SessionNotification.model_validate(message["params"])
        except Exception as err:  # noqa: BLE001 - the first is the client's failure
            problems.seen.append(f"unreadable session/update: {err}")

    return observe


class AcceptingClient:
    def __init__(self) -> None:
        self.asked: list[str] = []
        self.said: list[str] = []

    def on_connect(self, conn) -> None:
        pass

    async def request_permission(self, options, session_id, tool_call, **kwargs):
        self.asked.append(tool_call.title or "")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="accept")
        )

    async def session_update(self, session_id, update, **kwargs) -> None:
        if getattr(update, "session_update", "") == "agent_message_chunk":
            self.said.append(getattr(update.content, "text", ""))


async def main(repo: str, command: str, *args: str) -> int:
    problems = Problems()
    logging.getLogger().addHandler(problems)
    client = AcceptingClient()
    async with spawn_agent_process(
        client,
        command,
        *args,
        cwd=repo,
        env=dict(os.environ),
        observers=[reads_updates(problems)],
    ) as (conn, _):
        hello = await conn.initialize(protocol_version=1)
        print("protocol version", hello.protocol_version)
        session = (await conn.new_session(cwd=repo, mcp_servers=[])).session_id
        for text in ("add sub and mul", "done"):
            answer = await conn.prompt(session_id=session, prompt=[text_block(text)])
            print(text, "->", answer.stop_reason)
            if problems.seen:
                break
    print("asked:", *client.asked, sep="\n  ")
    print("".join(client.said))
    for problem in problems.seen:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if problems.seen else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(*sys.argv[1:])))
