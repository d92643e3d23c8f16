"""`tui-engineer acp`: serve the Agent Client Protocol on stdin/stdout until the client closes
stdin (or SIGTERM/SIGHUP). Logs go to stderr; stdout carries protocol messages only."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from acp import run_agent

from tui_engineer.acp.agent import EngineerAgent, StartOptions
from tui_engineer.acp.streams import protocol_streams
from tui_engineer.session.signals import run_stoppable

ON_A_TERMINAL = (
    "tui-engineer acp speaks the Agent Client Protocol (JSON-RPC) on stdin and stdout: an "
    "editor starts it (Zed, Neovim, toad...; docs/acp.md). Waiting for a client; Ctrl-D ends."
)


def serve_stdio(start: StartOptions) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="tui-engineer acp: %(name)s: %(message)s"
    )
    if os.isatty(0):
        print(ON_A_TERMINAL, file=sys.stderr)
    _, stopped_by = asyncio.run(run_stoppable(_serve(start)))
    return 0 if stopped_by is None else 1


async def _serve(start: StartOptions) -> None:
    agent = EngineerAgent(start)
    reader, writer = await protocol_streams()
    try:
        await run_agent(agent, writer, reader)
    finally:
        await agent.close()  # every session's shadow removed, its processes ended
