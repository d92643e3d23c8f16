"""Benchmark: the repo tree in a 100-file repo vs a generated 100,000-file repo.

Prints, for each repo: time to first paint (app start until the top-level listing is on screen),
time to an expanded tree (open a folder and a sub-folder), and the longest stall of the UI event
loop meanwhile (a ticker every 5 ms; a big number would mean the listing blocks the UI).
Target: the 100,000-file numbers stay close to the 100-file ones.
Run: python benchmarks/tui_tree.py [--files N]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.app import App, ComposeResult  # noqa: E402
from textual.pilot import Pilot  # noqa: E402

from tui_engineer.tui.panes.file_tree import RepoTree  # noqa: E402


def make_repo(folder: Path, files: int) -> Path:
    """`files` files in 3 levels of folders, plus an ignored build/ folder of 1,000 more."""
    repo = folder / f"repo-{files}"
    per_dir = 100
    dirs = max(1, files // per_dir)
    for d in range(dirs):
        leaf = repo / f"pkg{d // 10:03d}" / f"mod{d % 10}"
        leaf.mkdir(parents=True, exist_ok=True)
        for n in range(min(per_dir, files - d * per_dir)):
            (leaf / f"file{n:03d}.py").write_text("X = 1\n")
    (repo / "build").mkdir()
    for n in range(1000):
        (repo / "build" / f"out{n}.o").write_text("")
    (repo / ".gitignore").write_text("build/\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


class TreeApp(App[None]):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        yield RepoTree(self.root)


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool]) -> None:
    while not condition():
        await pilot.pause(0.001)


async def measure(repo: Path) -> dict[str, float]:
    app = TreeApp(repo)
    stalls: list[float] = []

    async def ticker() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            stalls.append(now - last - 0.005)
            last = now

    start = time.perf_counter()
    async with app.run_test(size=(100, 40)) as pilot:
        tick = asyncio.create_task(ticker())
        tree = app.query_one(RepoTree)
        await wait_for(pilot, lambda: "" in tree._loaded and tree.loading_count == 0)
        app.export_screenshot()  # one full render of the screen
        first_paint = time.perf_counter() - start

        start = time.perf_counter()
        tree.node_for("pkg000").expand()
        await wait_for(pilot, lambda: tree.node_for("pkg000/mod0") is not None)
        tree.node_for("pkg000/mod0").expand()
        await wait_for(pilot, lambda: tree.node_for("pkg000/mod0/file000.py") is not None)
        app.export_screenshot()
        expanded = time.perf_counter() - start
        tick.cancel()
    return {"first_paint": first_paint, "expanded": expanded, "max_stall": max(stalls, default=0)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for files in (100, args.files):
            started = time.perf_counter()
            repo = make_repo(Path(tmp), files)
            made = time.perf_counter() - started
            numbers = asyncio.run(measure(repo))
            print(
                f"{files:>7} files (made in {made:4.1f}s): "
                f"first paint {numbers['first_paint'] * 1000:6.0f} ms, "
                f"expanded {numbers['expanded'] * 1000:5.0f} ms, "
                f"longest UI stall {numbers['max_stall'] * 1000:4.0f} ms"
            )


if __name__ == "__main__":
    main()
