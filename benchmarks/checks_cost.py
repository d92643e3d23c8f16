"""Benchmark: what the project's own checks (issue 46) add to a step's wait.

A package of `--modules` modules (each importing the one before it, a few typed functions) whose
pyproject declares ruff and mypy, both installed in the repository's own .venv from the package
index (as a user has them), and a test suite of `--suite` seconds. A one-step session edits one
module; the step's wait is the time from its edits being written to its proposal being ready
(tests, checks, and the formatter when declared). Sessions with `--checks none` and with the
checks on alternate, best and median of `--rounds`. ruff and mypy run beside the tests, so the
wait should be the longer of the two, not their sum.

Run: python benchmarks/checks_cost.py [--modules 300] [--suite 1.0] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.checks_support import tool_venv  # noqa: E402
from tests.conftest import GIT_IDENTITY, git, write_files  # noqa: E402
from tests.engine_support import edit, run_headless  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tui_engineer.engine import events as ev  # noqa: E402


def _module(i: int) -> str:
    head = f"from pkg.mod_{i - 1} import scale_{i - 1}\n\n\n" if i else ""
    body = (
        f"def scale_{i}(x: int) -> int:\n    return x * {i + 1}\n\n\n"
        f"def name_{i}(label: str) -> str:\n    return label.upper() + '{i}'\n"
    )
    if i:
        body += f"\n\ndef both_{i}(x: int) -> int:\n    return scale_{i - 1}(x) + scale_{i}(x)\n"
    return head + body


def make_repo(folder: Path, modules: int, suite: float, wheels: list[Path]) -> Path:
    repo = folder / "repo"
    files = {f"pkg/mod_{i}.py": _module(i) for i in range(modules)}
    files |= {
        ".gitignore": ".venv/\n",
        "pkg/__init__.py": "",
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n\n[tool.ruff]\n\n[tool.mypy]\n',
        "tests/test_pkg.py": (
            "import time\n\nfrom pkg.mod_0 import scale_0\n\n\n"
            f"def test_scale():\n    time.sleep({suite})\n    assert scale_0(2) == 2\n"
        ),
    }
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write_files(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    tool_venv(repo, wheels)
    return repo


async def session(server: ScriptedServer, repo: Path, checks: str) -> float:
    change = edit("pkg/mod_1.py", "    return x * 2\n", "    return x * 2 + 0\n")
    back = edit("pkg/mod_1.py", "    return x * 2 + 0\n", "    return x * 2\n")
    server.script(Reply(text=change if checks == "none" else back))
    result, seen = await run_headless(
        repo, "change scale_1", server.base_url, plan=False, project_checks=checks,
        test_command=f"{sys.executable} -m pytest -q", sandbox="local",
    )  # fmt: skip
    assert result.exit_code == 0, result.message
    written = seen.of(ev.EditsApplied)[0].at
    ready = seen.of(ev.ProposalReady)[0].at
    for e in seen.of(ev.CheckFinished):
        print(f"      {e.name}: {e.summary} in {e.duration:.2f}s")
    return ready - written


def _wheels(folder: Path) -> list[Path]:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "-d", str(folder),
         "ruff", "mypy"],
        check=True,
    )  # fmt: skip
    return sorted(folder.glob("*.whl"))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--suite", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.update(GIT_IDENTITY)
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-0123456789abcdef")
    waits: dict[str, list[float]] = {"none": [], "auto": []}
    with tempfile.TemporaryDirectory(prefix="checks-bench-") as tmp, ScriptedServer() as server:
        repo = make_repo(Path(tmp), args.modules, args.suite, _wheels(Path(tmp) / "wheels"))
        for _ in range(args.rounds):
            for checks in ("none", "auto"):
                wait = await session(server, repo, checks)
                waits[checks].append(wait)
                print(f"  checks {checks}: step's wait {wait:.2f}s")
    off, on = min(waits["none"]), min(waits["auto"])
    mid_off, mid_on = statistics.median(waits["none"]), statistics.median(waits["auto"])
    print(
        f"{args.modules} modules, suite {args.suite:.1f}s: the step's wait without checks "
        f"{off:.2f}s best / {mid_off:.2f}s median, with ruff + mypy {on:.2f}s / {mid_on:.2f}s: "
        f"the checks add {on - off:+.2f}s (best) / {mid_on - mid_off:+.2f}s (median)"
    )


if __name__ == "__main__":
    asyncio.run(main())
