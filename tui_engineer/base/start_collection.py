"""Python's cyclic garbage collector held off while a headless start's imports run.

Those imports (the openai SDK's pydantic models above all, then this package's) make a few
hundred thousand objects that live as long as the process. The collector, run every 700 new
objects, walked them again and again: 343 collections and 0.16-0.18 s of CPU in a warm
one-step session at 40,000 files, 0.4 s at 200,000, on the developers' machine. Held off until
the model client is made (its import is the start's last), those objects are then set aside
for good (`gc.freeze`: no later collection walks them) and collection goes on as usual. The
garbage the imports left meanwhile is kept too: peak memory was unchanged (~100 MiB).

The TUI holds it the same way from the app's opening (cli/launch.py) until its start-up checks
are done or a problem screen waits for the human (tui/startup.py): the first frame came 0.1 s
sooner (benchmarks/first_paint.py). It collects once before setting its objects aside: 21,000
objects of the start were garbage, which a process living for hours should not keep."""

from __future__ import annotations

import gc
import threading

_held = False
_lock = threading.Lock()


def hold() -> None:
    """No cyclic collection from now until `release` (a process's start-up)."""
    global _held
    with _lock:
        if gc.isenabled():
            gc.disable()
            _held = True


def release(collect: bool = False) -> None:
    """What exists now is kept for good, and collection is back on; nothing when not held.
    `collect`: the garbage the start left is collected first (one full collection, 0.1 s
    after the TUI's start), for a process that lives for hours; a headless run keeps it."""
    global _held
    with _lock:
        if _held:
            _held = False
            if collect:
                gc.collect()
            gc.freeze()
            gc.enable()
