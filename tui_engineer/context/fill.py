"""The rest of a repository's map, read in the background into its cache.

A session's first map is cut short on a big repository the cache has not seen (its bound, or
the baseline's result being in: context/repomap.py), so the first model call does not wait for
every file to be read. This process reads the rest, at the lowest CPU priority (the user's
tests come first), in rounds that each save the cache: the session's later prompts, and the
next session, find those files mapped. The session stops it when it ends; a round cut there
loses only that round's reading.

    python -m tui_engineer.context.fill FOLDER CACHE_REPOSITORY
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from pathlib import Path

from tui_engineer.context.repomap import build_map

ROUND_SECONDS = 10.0  # reading between saves of the cache (each round lists the files again)


def fill(root: Path, cache_root: Path) -> int:
    """Read rounds until the map is whole; the files read."""
    read = 0
    while True:
        # Never staging the shadow: this is another process than the session's, whose next
        # `git add` git fails at once while the lock on the index is held here.
        built = build_map(root, cache_root=cache_root, seconds=ROUND_SECONDS, stage=False)
        read += built.read
        if not built.left or not built.read:  # whole, or nothing more can be read
            return read


async def start_filling(root: Path, cache_root: Path) -> asyncio.subprocess.Process | None:
    """The filler, started; None when it cannot start (the map stays cut short)."""
    command = [sys.executable, "-m", "tui_engineer.context.fill", str(root), str(cache_root)]
    with contextlib.suppress(OSError):
        return await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
    return None


async def stop_filling(process: asyncio.subprocess.Process | None) -> None:
    if process is None or process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    await process.wait()


def main(argv: list[str]) -> None:
    with contextlib.suppress(OSError):
        os.nice(19)
    fill(Path(argv[0]), Path(argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
