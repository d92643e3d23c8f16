"""The first spare, made while the human types the first request (vcs/spare_ahead.py): for a
front end whose session starts later than its start-up checks (the TUI)."""

from __future__ import annotations

import asyncio
import contextlib
import threading

from tui_engineer.config import Settings
from tui_engineer.session.prepare import Prepared
from tui_engineer.vcs.spare_ahead import make_spare


def spares_kept(settings: Settings) -> int:
    """How many spare shadows the repository keeps (vcs/spare.py): one for the session's own,
    one for each step it prepares side by side."""
    return 1 + (settings.parallel_steps if settings.pipeline else 0)


def start_spare_ahead(prepared: Prepared) -> None:
    """Make the repository's first spare in a daemon thread (a quit does not wait for a
    checkout); `prepared.spare_ahead` is done when it is, and the session's shadow waits for it
    (session/run.py) rather than checking out the same files beside it."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[bool] = loop.create_future()
    prepared.spare_ahead = done
    root, pool = prepared.root, spares_kept(prepared.settings)

    def settle(made: bool) -> None:
        if not done.done():
            done.set_result(made)

    def work() -> None:
        try:
            made = make_spare(root, pool)
        except Exception:  # noqa: BLE001 - the session meets the same problem and says it
            made = False
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, made)

    threading.Thread(target=work, name="spare-ahead", daemon=True).start()
