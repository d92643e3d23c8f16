"""Save SVG screenshots of the real app in real states into screenshots/.

Each shot runs the real TUI over the real engine, against the scripted OpenAI-compatible server
(real HTTP on 127.0.0.1) in a fresh temp git repository, and drives it by keys until the state
is reached. Nothing is drawn by hand.

    python scripts/screenshots.py            # all shots
    python scripts/screenshots.py review     # shots whose name contains "review"
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.pilot import Pilot  # noqa: E402

from tests.conftest import GIT_IDENTITY, SAMPLE_FILES, write_files  # noqa: E402
from tests.pair_support import FILES as PAIR_FILES  # noqa: E402
from tests.scripted_server import Reply, ScriptedServer  # noqa: E402
from tests.tui.app_support import (  # noqa: E402
    FIXED_DATES,
    QUIET_TESTS,
    drive_to_fix_loop,
    drive_to_partial_review,
    drive_to_review,
    drive_to_still_wrong,
    fix_loop_script,
    make_app,
    partial_review_script,
    review_script,
    send_chat,
    still_wrong_script,
    wait_for,
)
from tui_engineer.tui.themes import load_themes  # noqa: E402

OUT = ROOT / "screenshots"
SIZE = (130, 40)
Drive = Callable[..., Awaitable[None]]


def new_repo(parent: Path, files: dict[str, str] | None = None) -> Path:
    repo = parent / "calc"
    write_files(repo, files or SAMPLE_FILES)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


async def shoot(name: str, script: list[Reply], request: str, drive: Drive, **opts: object) -> None:
    theme = opts.pop("theme", None)
    files = opts.pop("files", None)
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        server.script(*script)
        app = make_app(new_repo(Path(tmp), files), server.base_url, request, **opts)  # type: ignore[arg-type]
        app.options.flags["test_command"] = QUIET_TESTS
        if theme:
            app.options.flags["theme"] = theme
        async with app.run_test(size=SIZE) as pilot:
            await drive(pilot)
            app.save_screenshot(filename=f"{name}.svg", path=str(OUT))
            await app.stop_work()
    print(f"screenshots/{name}.svg")


async def drive_to_shell(pilot: Pilot) -> None:
    """A command of the human's in the Shell pane, failing, its output sent with `y`."""
    app = pilot.app
    await wait_for(pilot, lambda: app.controller.ready)
    await send_chat(pilot, '!python -c "import calc; assert calc.add(2, 3) == 6, calc.add(2, 3)"')
    await wait_for(pilot, lambda: "[exit status 1]" in app.shell_pane.output_lines)
    await pilot.press("y")
    await pilot.pause()


def shots() -> dict[str, Callable[[], Awaitable[None]]]:
    found: dict[str, Callable[[], Awaitable[None]]] = {
        "review": lambda: shoot("review", review_script(), "add sub and mul", drive_to_review),
        "fix-loop": lambda: shoot(
            "fix-loop", fix_loop_script(), "add mul", drive_to_fix_loop, plan=False
        ),
        "partial-review": lambda: shoot(
            "partial-review",
            partial_review_script(),
            "add sub and mul",
            drive_to_partial_review,
            files=PAIR_FILES,
        ),  # fmt: skip
        "still-wrong": lambda: shoot(
            "still-wrong", still_wrong_script(), "add sub", drive_to_still_wrong, plan=False
        ),
        "shell": lambda: shoot("shell", [], "", drive_to_shell),
    }
    for theme in sorted(t.name for t in load_themes()):
        name = f"theme-{theme.removeprefix('tui-engineer-')}"
        found[name] = lambda name=name, theme=theme: shoot(
            name, review_script(), "add sub and mul", drive_to_review, theme=theme
        )
    return found


def isolate() -> None:
    """Like the test suite: a throwaway config/cache home, a git identity, fixed dates."""
    home = Path(tempfile.mkdtemp(prefix="tui-shots-"))
    os.environ.update(
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_CACHE_HOME=str(home / "cache"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        OPENAI_API_KEY="screenshots",
        **GIT_IDENTITY,
        **FIXED_DATES,
    )


async def main(patterns: list[str]) -> None:
    isolate()
    OUT.mkdir(exist_ok=True)
    for name, take in shots().items():
        if not patterns or any(p in name for p in patterns):
            await take()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
