"""Serve a scripted model for demos and manual tries: a real OpenAI-compatible HTTP server on
127.0.0.1 that answers a two-step session on the README's calc example (one step fails its tests
once and is fixed).

    python scripts/demo_server.py --port 8765 &
    OPENAI_API_KEY=demo tui-engineer run "add sub and mul" --yes \\
        --base-url http://127.0.0.1:8765/v1 --model test-model
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.engine_support import edit, plan_reply  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402

CALC = "calc.py"
TESTS = "tests/test_calc.py"


def add_function(name: str, body: str, test: str) -> str:
    code = edit(CALC, "    return a + b\n", f"    return a + b\n\n\ndef {name}(a, b):\n{body}")
    check = f"\n\ndef test_{name}():\n    from calc import {name}\n    {test}\n"
    return code + edit(TESTS, "    assert add(2, 3) == 5\n", f"    assert add(2, 3) == 5{check}")


def demo_script() -> list[Reply]:
    return [
        Reply(text=plan_reply("Add sub", "Add mul"), usage=(900, 120)),
        Reply(
            text="Adding `sub` with a test.\n\n"
            + add_function("sub", "    return a - b\n", "assert sub(5, 3) == 2"),
            usage=(1500, 200),
        ),
        Reply(
            text="Adding `mul` with a test.\n\n"
            + add_function(
                "mul", "    return a + b  # copied from add\n", "assert mul(4, 3) == 12"
            ),
            usage=(1700, 210),
        ),
        Reply(
            text="`test_mul` fails: `mul` returns `a + b`, so mul(4, 3) gives 7, not 12.",
            usage=(1300, 40),
        ),
        Reply(
            text="Multiply instead of adding.\n\n"
            + edit(CALC, "    return a + b  # copied from add\n", "    return a * b\n"),
            usage=(2100, 60),
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    server = ScriptedServer(port=port, models=("test-model", "gpt-4o-mini")).start()
    server.script(*demo_script())
    print(f"scripted model at {server.base_url} (model: test-model)", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    server.stop()


if __name__ == "__main__":
    main()
