"""One browser tab's process under `tui-engineer serve`: the entry point textual-serve runs per
tab (`python -m tui_engineer.cli.web_tab`, see web.app_command). Its own module so that the web
server never imports the CLI that starts it: this child opens the app through launch.py, as the
CLI does, and nothing imports it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

from tui_engineer.base.processes import is_running
from tui_engineer.cli import closed_tabs


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
        closed_tabs.forget(server_pid, os.getpid())  # a closed tab's id, now this tab's
    from tui_engineer.cli.launch import reported

    return reported(lambda args: _open(args, server_pid), argv)


def _open(argv: list[str], server_pid: int | None = None) -> int:
    """The tab's arguments: `demo [REQUEST]` under `serve --demo`, else the app's own."""
    from tui_engineer.cli.launch import open_app, open_demo

    if argv[:1] == ["demo"]:
        return open_demo(argv[1:])
    session, reattached = reattach(argv, server_pid)
    if session is not None:  # a reload: this tab goes on with the session, --resume or not
        _claim_resume(server_pid)
        return open_app(_without_resume(argv), notes=(reattached,), resume=session)
    argv, note = one_tab_resumes(argv, server_pid)
    return open_app(argv, notes=(note,) if note else ())


REATTACH_WAIT = 60.0  # seconds a closed tab's session may take to stop before this tab asks
REATTACHED = (
    "This tab goes on with session {session}, which a closed (or reloaded) tab was running: "
    "shown as it was, without asking the model again for what it already answered."
)


def reattach(argv: list[str], server_pid: int | None) -> tuple[str | None, str]:
    """A reload, or a tab opened after one was closed: the newest session a closed tab of this
    server held (cli/closed_tabs.py). Wait for its stop if it is still stopping, then return it
    to go on with here and the sentence saying so; (None, "") when there is none, it has
    nothing left to go on with, or another session now works on the repository (an open tab's
    or another terminal's: the start-up problem that offers a take-over says so)."""
    if server_pid is None:
        return None, ""
    closed = closed_tabs.closed_sessions(server_pid)
    if not closed:
        return None, ""
    from tui_engineer.base.errors import UserError
    from tui_engineer.cli.arguments import build_parser
    from tui_engineer.session.resume import load_run
    from tui_engineer.vcs.one_session import other_live_session, wait_for_exit
    from tui_engineer.vcs.repo import find_repo_root

    tab, session = closed[0]
    closed_tabs.forget(server_pid, tab)  # taken up once, by this tab
    try:
        args = build_parser().parse_args(argv)
        root = find_repo_root((args.repo or Path.cwd()).resolve())
        if not wait_for_exit(tab, REATTACH_WAIT):
            return None, ""
        if other_live_session(root) is not None:
            return None, ""
        load_run(root, session)
    except (UserError, SystemExit):
        return None, ""  # the app's own start-up says what is wrong
    return session, REATTACHED.format(session=session)


def _resuming(argv: list[str]) -> bool:
    return any(a == "--resume" or a.startswith("--resume=") for a in argv)


# Held for the tab's life by the tab that resumes (`one_tab_resumes`); the system releases it
# when that process ends, however it ends.
_resume_claim: int | None = None
ANOTHER_TAB = (
    "Another tab is going on with the resumed session, so this tab is a new session. To "
    "resume it here instead, close that tab, then open a new one once its session stopped."
)


def one_tab_resumes(argv: list[str], server_pid: int | None) -> tuple[list[str], str]:
    """Under `serve --resume`, every tab gets --resume: the first tab goes on with the session,
    and a tab opened while it is open starts a new session (saying why) instead of being told
    that session is still running. A lock on a file of this server's decides, held until the
    resuming tab's process ends: a tab opened after it closed resumes again."""
    if server_pid is None or not _resuming(argv):
        return argv, ""
    if not _claim_resume(server_pid):
        return _without_resume(argv), ANOTHER_TAB
    return argv, ""


def _claim_resume(server_pid: int | None) -> bool:
    """Take this server's resume lock for the tab's life; False when another tab holds it."""
    global _resume_claim
    if server_pid is None:
        return False
    path = Path(tempfile.gettempdir()) / f"tui-engineer-serve-{server_pid}-resume.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return False
    _resume_claim = fd
    return True


def _without_resume(argv: list[str]) -> list[str]:
    """`argv` without --resume and the session it names (--resume RUN, --resume=RUN)."""
    kept: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            if not arg.startswith("-"):  # --resume takes no REQUEST: this is its RUN
                continue
        if arg == "--resume":
            skip_value = True
        elif not arg.startswith("--resume="):
            kept.append(arg)
    return kept


def watch_server(pid: int, every: float = 1.0) -> None:
    """When the server dies without ending this session (kill -9, a crash), nothing else would:
    Textual's web driver takes no notice of its input closing. That is a hang-up, as when a
    terminal closes, so this sends the app SIGHUP, which it answers with its clean stop."""

    def watch() -> None:
        while is_running(pid):
            time.sleep(every)
        os.kill(os.getpid(), signal.SIGHUP)

    threading.Thread(target=watch, name="serve-watch", daemon=True).start()


if __name__ == "__main__":
    sys.exit(session_main(sys.argv[1:]))
