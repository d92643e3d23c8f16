"""When the terminal closes (SIGHUP: the window or the ssh connection went away).

Textual's output thread dies on the first write to a hung-up terminal (EIO); every later write
then waits on its full queue, so the app hung for ever on its way out, shadow and all. The fix
here gives the driver a fresh output thread writing to /dev/null, so the clean exit (engine
cancelled, shadow removed, record closed) runs to its end."""

from __future__ import annotations

import os

from textual.driver import Driver
from textual.drivers._writer_thread import WriterThread  # no public way to replace it

from tui_engineer.session.signals import detach_from_terminal


def write_nowhere(driver: Driver | None) -> None:
    """Point the process and `driver`'s output at /dev/null (safe to call more than once)."""
    detach_from_terminal()
    if driver is None or not hasattr(driver, "_writer_thread"):
        return  # a driver without an output thread (tests, the web driver) writes no terminal
    writer = WriterThread(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (lives on)
    writer.start()
    driver._writer_thread = writer  # type: ignore[attr-defined]
