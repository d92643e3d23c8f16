"""Serve the built-in demo model (tui_engineer/demo) on a fixed port, for the headless demo and
manual tries against a sample repo (`tui-engineer demo --dir .` makes one). The model follows
rules, not a fixed script: a reject, a reordering or a rerun needs no restart.

    python scripts/demo_server.py --port 8765 &
    tui-engineer run "add sub and mul" --yes \\
        --base-url http://127.0.0.1:8765/v1 --model demo-model
"""

from __future__ import annotations

import argparse
import signal
import threading

from tui_engineer.demo import MODEL, DemoServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with DemoServer(port=port) as server:
        print(f"demo model at {server.base_url} (model: {MODEL})", flush=True)
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
