"""One browser tab's process under `tui-engineer serve`: the entry point textual-serve runs per
tab (`python -m tui_engineer.web_tab`, see web.app_command). It is its own module so that the web
server never imports the CLI that starts it: this child opens the app through launch.py, as the
CLI does, and nothing imports it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path


def session_main(argv: list[str]) -> int:
    """One browser tab's session: `tui-engineer ARGS`, in a session of its own, that ends
    when the server does.

    Ctrl+C in the terminal running `serve` signals its whole process group. Sessions in that
    group would each take the SIGINT mid-work (their git and test child processes too, which
    can leave a half-made shadow worktree behind). Outside it, only the server gets the signal
    and ends each session through its tab, the way a closed tab does."""
    server_pid = None
    if argv[:1] == ["--server-pid"]:
        server_pid, argv = int(argv[1]), argv[2:]
    with contextlib.suppress(OSError):  # already a session leader: nothing to leave
        os.setsid()
    if server_pid is not None:
        watch_server(server_pid)
    from tui_engineer.launch import reported

    return reported(_open, argv)


def _open(argv: list[str]) -> int:
    """The tab's arguments: `demo [REQUEST]` under `serve --demo`, else the app's own."""
    from tui_engineer.launch import open_app, open_demo

    return open_demo(argv[1:]) if argv[:1] == ["demo"] else open_app(argv)


def watch_server(pid: int, every: float = 1.0) -> None:
    """When the server dies without ending this session (kill -9, a crash), nothing else would:
    Textual's web driver takes no notice of its input closing. That is a hang-up, as when a
    terminal closes, so this sends the app SIGHUP, which it answers with its clean stop."""

    def watch() -> None:
        while is_running(pid):
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGHUP)

    threading.Thread(target=watch, name="serve-watch", daemon=True).start()


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed server no one has reaped yet is a zombie: gone, for us
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


if __name__ == "__main__":
    sys.exit(session_main(sys.argv[1:]))
