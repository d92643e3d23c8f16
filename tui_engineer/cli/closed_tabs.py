"""Which sessions closed browser tabs of a `tui-engineer serve` held: how a reload (or a tab
opened after one was closed) goes on with the session instead of planning it again, while a
second tab beside an open one is told about it (issue 37 §2).

textual-serve runs one process per tab and tells it to quit when the tab's websocket closes; the
process then stops cleanly (the engine cancelled, the shadow removed, the record closed), often
before the new tab of a reload has even started. So the server, at that moment and before it
tells the process to quit, writes down which session the tab's process holds (its shadow names
its process id; the tab's process is the one textual-serve started, by `exec`,
web.app_command): a file named for that id, in a folder of the server's own, holding the
session's id ("" when the tab had no session yet). A new tab takes up the newest such session:
it waits for its stop if it is still stopping, and goes on with it (web_tab.reattach). A session
held by an open tab, or by another terminal, has no mark: the new tab is told so and may take it
over (session/start.py).
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path


def serve_folder(server_pid: int) -> Path:
    """The server's own folder of marks (removed when the server stops)."""
    return Path(tempfile.gettempdir()) / f"tui-engineer-serve-{server_pid}"


def mark_closed(server_pid: int, tab_pid: int, session: str) -> None:
    """The tab whose process is `tab_pid` was closed while it held `session` ("": none)."""
    folder = serve_folder(server_pid)
    with contextlib.suppress(OSError):  # a mark that cannot be made: a new tab asks instead
        folder.mkdir(mode=0o700, exist_ok=True)
        (folder / f"closed-{tab_pid}").write_text(session)


def closed_sessions(server_pid: int) -> list[tuple[int, str]]:
    """(tab process id, session id) of each closed tab that held a session, newest first."""
    folder = serve_folder(server_pid)
    marks = sorted(folder.glob("closed-*"), key=_mtime, reverse=True) if folder.is_dir() else []
    found = []
    for mark in marks:
        with contextlib.suppress(OSError, ValueError):
            pid, session = int(mark.name.removeprefix("closed-")), mark.read_text().strip()
            if session:
                found.append((pid, session))
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def forget(server_pid: int, tab_pid: int) -> None:
    """A mark that no longer says anything: its session was taken up, or the id is reused."""
    (serve_folder(server_pid) / f"closed-{tab_pid}").unlink(missing_ok=True)


def remove_marks(server_pid: int) -> None:
    shutil.rmtree(serve_folder(server_pid), ignore_errors=True)
