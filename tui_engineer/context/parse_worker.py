"""A worker process for cold map builds: reads `[(path, bytes), ...]` (marshal) on stdin and
writes `[(lines, symbol rows) | None, ...]` back on stdout.

A plain `python -m` child rather than multiprocessing: a spawned multiprocessing worker
re-imports the parent's main script, which runs again whenever that script has no main guard,
and forking a process that has threads running (the engine, the TUI) can deadlock the child."""

from __future__ import annotations

import marshal
import sys

from tui_engineer.context.repomap import parse_chunk


def main() -> None:
    items = marshal.loads(sys.stdin.buffer.read())
    sys.stdout.buffer.write(marshal.dumps(parse_chunk(items)))


if __name__ == "__main__":
    main()
