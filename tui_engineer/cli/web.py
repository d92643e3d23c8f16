"""`tui-engineer serve`: the same app in a browser, through textual-serve.

textual-serve is a small web server that runs a command once per browser tab and bridges the
tab's xterm.js terminal to that process over a websocket. So each tab is its own process, as
a terminal is, and one repository has one live session across tabs: a second tab is told which
tab holds it and may take it over (session/start.py), and a reloaded tab goes on with the
session its old process was running (cli/closed_tabs.py, web_tab.reattach). Under `--demo`
each tab has its own sample repo.
Anyone who can open the page can drive the app, and the app edits files, commits and runs
tests: that is a shell on this machine. Hence 127.0.0.1 by default and a warning otherwise.
"""

from __future__ import annotations

import ipaddress
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.cli.closed_tabs import mark_closed, remove_marks

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


@dataclass(frozen=True)
class ServeOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    demo: bool = False
    public_url: str | None = None  # the address browsers use, when it is not host:port
    repo: Path | None = None  # the repository the tabs work on (not under --demo)
    app_args: tuple[str, ...] = ()  # passed on to `tui-engineer` (or `tui-engineer demo`)


def app_command(options: ServeOptions) -> str:
    """The shell command textual-serve runs per browser tab. It names this interpreter, not a
    `tui-engineer` on PATH, so a venv that was never activated still serves its own install.
    It enters through `session_main` in web_tab.py."""
    argv = [sys.executable, "-m", "tui_engineer.cli.web_tab", "--server-pid", str(os.getpid())]
    if options.demo:
        argv.append("demo")
    # exec: the tab's process is the one textual-serve started, whose id the server knows
    # (a closed tab is marked by it: cli/closed_tabs.py), not a child of a shell.
    return "exec " + shlex.join([*argv, *options.app_args])


def page_url(options: ServeOptions) -> str:
    if options.public_url:
        return options.public_url
    host = options.host
    if ":" in host:  # an IPv6 literal needs brackets in a URL
        host = f"[{host}]"
    return f"http://{host}:{options.port}"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def banner(options: ServeOptions) -> list[str]:
    """What `serve` prints before the server starts: the URL first, plainly."""
    what = "the demo" if options.demo else "tui-engineer"
    lines = [
        f"tui-engineer serve: open {page_url(options)} in a browser to use {what}",
        "  one session per repository: a second tab is told and may take it over, a reloaded "
        "tab goes on with its session; Ctrl+C stops the server and every session",
    ]
    if not is_loopback(options.host):
        lines.append(
            f"  warning: listening on {options.host}: anyone who can reach this port can edit "
            "files and run commands here, as this user (a shell, in effect)"
        )
    return lines


def serve(options: ServeOptions) -> None:
    """Serve until Ctrl+C or SIGTERM; either one ends every session, then the server."""
    for line in banner(options):
        print(line, flush=True)
    server = _server_class(options.repo)(
        app_command(options),
        host=options.host,
        port=options.port,
        title="tui-engineer demo" if options.demo else "tui-engineer",
        public_url=options.public_url or page_url(options),
    )
    try:
        server.serve()
    finally:
        remove_marks(os.getpid())


def _server_class(repo: Path | None = None) -> type:
    """textual-serve's Server, made to end its sessions at once when it stops.

    Left alone, a stop waits for each open tab's websocket to go quiet (about 20 s) before the
    sessions end. aiohttp's advice is to close websockets on shutdown; closing one ends its
    session the normal way (textual-serve tells the app to quit, and the app cleans up)."""
    import asyncio

    from aiohttp import WSCloseCode, web
    from textual_serve.app_service import AppService
    from textual_serve.server import Server

    class _Server(Server):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.sockets: set[web.WebSocketResponse] = set()

        async def _process_messages(
            self, websocket: web.WebSocketResponse, app_service: AppService
        ) -> None:
            self.sockets.add(websocket)
            try:
                await super()._process_messages(websocket, app_service)
            finally:
                self.sockets.discard(websocket)
                # Before the tab's process is told to quit: a reload's new tab goes on with
                # the session it held (cli/closed_tabs.py).
                process = getattr(app_service, "_process", None)
                if process is not None and repo is not None:
                    session = await asyncio.to_thread(_session_of, repo, process.pid)
                    mark_closed(os.getpid(), process.pid, session)

        async def on_startup(self, app: web.Application) -> None:
            # A closed terminal (SIGHUP) stops the server like Ctrl+C does, sessions first;
            # left to the default, the server would die and orphan them.
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGHUP, self.request_exit)
            await super().on_startup(app)

        async def on_shutdown(self, app: web.Application) -> None:
            for websocket in list(self.sockets):
                await websocket.close(code=WSCloseCode.GOING_AWAY, message=b"server stopped")

    return _Server


def _session_of(repo: Path, pid: int) -> str:
    """The session the process `pid` works on in `repo` ("" for none, or no repository)."""
    from tui_engineer.base.errors import UserError
    from tui_engineer.vcs.one_session import live_sessions
    from tui_engineer.vcs.repo import find_repo_root

    try:
        sessions = live_sessions(find_repo_root(repo))
    except (UserError, OSError, ValueError):  # the tab closes all the same; a new tab asks
        return ""
    return next((s.session_id for s in sessions if s.pid == pid), "")
