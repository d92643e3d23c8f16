"""Benchmark: opening and scrolling a 20,000-line diff in the DiffView.

The diff is real `git diff` output: a 20,000-line Python file with every fifth line changed.
Prints the time to parse and paint the first screen, the time per page while paging down
(each page is a full render of the screen), the time to jump to the end, and the split toggle.
Target: every number well under 100 ms except the first open (well under a second).
Run: python benchmarks/tui_diff.py [--lines N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.app import App, ComposeResult  # noqa: E402

from tui_engineer.tui.panes.diff_view import DiffView  # noqa: E402


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def make_diff(folder: Path, lines: int) -> str:
    repo = folder / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    source = repo / "big.py"
    source.write_text("".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(lines // 2)))
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
    text = source.read_text().splitlines()
    changed = [f"{line}  # changed" if n % 5 == 0 else line for n, line in enumerate(text)]
    source.write_text("\n".join(changed) + "\n")
    return git(repo, "diff", "-U3")


class DiffApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DiffView()


async def measure(diff: str) -> dict[str, float | list[float]]:
    app = DiffApp()
    async with app.run_test(size=(160, 50)) as pilot:
        view = app.query_one(DiffView)
        view.focus()
        start = time.perf_counter()
        view.show_diff(diff)
        await pilot.pause()
        app.export_screenshot()
        opened = time.perf_counter() - start

        start = time.perf_counter()
        await pilot.pause()
        app.export_screenshot()
        baseline = time.perf_counter() - start

        # Scroll without the smooth-scroll animation: this times our rendering, not the easing.
        pages: list[float] = []
        for page in range(1, 51):
            start = time.perf_counter()
            view.scroll_to(y=page * view.size.height, animate=False)
            await pilot.pause()
            app.export_screenshot()
            pages.append(time.perf_counter() - start)

        start = time.perf_counter()
        view.scroll_end(animate=False)
        await pilot.pause()
        app.export_screenshot()
        to_end = time.perf_counter() - start

        start = time.perf_counter()
        view.toggle_split()
        await pilot.pause()
        app.export_screenshot()
        split = time.perf_counter() - start
        return {
            "opened": opened,
            "baseline": baseline,
            "pages": pages,
            "to_end": to_end,
            "split": split,
            "rows": view.virtual_size.height,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        diff = make_diff(Path(tmp), args.lines)
    numbers = asyncio.run(measure(diff))
    pages = numbers["pages"]
    assert isinstance(pages, list)
    print(f"diff of {len(diff.splitlines()):,} lines -> {numbers['rows']:,} rows")
    print(f"frame, no change   : {numbers['baseline'] * 1000:7.1f} ms  (pause + export, overhead)")
    print(f"open + first paint : {numbers['opened'] * 1000:7.1f} ms")
    print(
        f"page down (x{len(pages)})   : median {statistics.median(pages) * 1000:5.1f} ms, "
        f"worst {max(pages) * 1000:5.1f} ms"
    )
    print(f"jump to end        : {numbers['to_end'] * 1000:7.1f} ms")
    print(f"toggle split       : {numbers['split'] * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
