"""A real MCP server for tests, written with the official SDK's MCPServer (FastMCP in 1.x) and
run over stdio as its own process: `python tests/mcp_glossary_server.py`. Its tools answer at
once (lookup_term), hang (wait), or fail (closed). `--starts FILE` counts its starts there."""

from __future__ import annotations

import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("glossary")
TERMS = {"sub": "subtraction: a - b, the difference of two numbers"}


@app.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookup_term(term: str) -> str:
    """Look a term up in the project's glossary."""
    return f"{term}: {TERMS.get(term, 'not in the glossary')}"


@app.tool()
def wait(seconds: float) -> str:
    """Wait that many seconds, then answer (a tool that hangs)."""
    time.sleep(seconds)
    return "done waiting"


@app.tool()
def closed() -> str:
    """Always fails."""
    raise ValueError("the glossary is closed today")


if __name__ == "__main__":
    if "--starts" in sys.argv:  # each start adds a line to this file: the test counts them
        with open(sys.argv[sys.argv.index("--starts") + 1], "a") as starts:
            starts.write("started\n")
    if "--fail" in sys.argv:  # a server that cannot start: says why on stderr, exits
        print("glossary: cannot open glossary.db", file=sys.stderr)
        sys.exit(3)
    app.run()
