"""`tui-engineer serve`: the app in a browser. The end-to-end test drives a real headless
Chromium against a real `tui-engineer serve --demo` process (textual-serve, a websocket, a
demo session per tab) and checks what a user would: the app paints, a key reaches it, and
stopping the server ends every session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import pytest

from tests.browser_support import Chromium, find_chromium, stop_process_group, terminal_text
from tui_engineer.cli.arguments import build_serve_parser
from tui_engineer.cli.web import ServeOptions, app_command, banner

CHROMIUM = find_chromium()
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium; .ci/run does)"
)


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui_engineer", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_serve_listens_on_loopback_unless_told_otherwise() -> None:
    args = build_serve_parser().parse_args([])
    assert (args.host, args.port) == ("127.0.0.1", 8000)
    options = ServeOptions(host=args.host, port=args.port)
    assert banner(options)[0] == (
        "tui-engineer serve: open http://127.0.0.1:8000 in a browser to use tui-engineer"
    )
    assert not any("warning" in line for line in banner(options))


def test_serve_on_a_public_address_warns_that_it_gives_a_shell() -> None:
    lines = banner(ServeOptions(host="0.0.0.0", port=9000))
    assert "http://0.0.0.0:9000" in lines[0]
    assert any("warning" in line and "run commands" in line for line in lines)


def test_each_tab_runs_this_interpreter_with_the_app_arguments() -> None:
    command = app_command(ServeOptions(demo=True, app_args=("add div", "--dir", "/tmp/a b")))
    # This interpreter (it works in a venv that was never activated), run by exec: the tab's
    # process is the one the server started (a closed tab is marked by its id).
    assert command.split()[:2] == ["exec", sys.executable]
    assert f"-m tui_engineer.cli.web_tab --server-pid {os.getpid()} " in command  # ends if it dies
    assert command.endswith(" demo 'add div' --dir '/tmp/a b'")


def test_serve_outside_a_repo_fails_at_once_in_the_terminal(tmp_path: Path) -> None:
    done = run_cli("serve", "--port", "1", cwd=tmp_path)
    assert done.returncode != 0
    assert "not inside a git repository" in done.stderr
    assert "Serving" not in done.stdout  # no server started


def test_serve_rejects_an_unknown_app_option_before_serving(tmp_path: Path) -> None:
    done = run_cli("serve", "--demo", "--port", "1", "--no-such-flag", cwd=tmp_path)
    assert done.returncode == 2
    assert "--no-such-flag" in done.stderr


def free_port() -> int:
    # textual-serve writes host:port into the page (the websocket URL), so port 0 will not do.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(url: str, server: subprocess.Popen[bytes], timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "tui-engineer serve exited at start"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer in {timeout} s")


def descendants(pid: int) -> set[int]:
    """Every process below `pid` now (sessions leave its process group, so follow parents)."""
    ps = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True)
    children: dict[int, list[int]] = {}
    for line in ps.stdout.splitlines():
        child, parent = map(int, line.split())
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def running(pids: set[int]) -> list[str]:
    """Those of `pids` still running (zombies waiting for a reaper do not count), described."""
    ps = subprocess.run(["ps", "-e", "-o", "pid=,stat=,args="], capture_output=True, text=True)
    rows = (line.split(None, 2) for line in ps.stdout.splitlines())
    return [" ".join(row) for row in rows if int(row[0]) in pids and not row[1].startswith("Z")]


def wait_all_gone(pids: set[int], timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := running(pids)) and time.monotonic() < deadline:
        time.sleep(0.3)
    return left


@contextmanager
def served_demo(
    tmp_path: Path, sessions: set[int]
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`tui-engineer serve --demo` on a free port, in its own process group. Whatever happens,
    it and the session processes the test put in `sessions` are gone afterwards."""
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "tui_engineer", "serve", "--demo", "--port", str(port)]
        + ["--dir", str(tmp_path)],
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/"
        wait_until_up(url, server)
        yield url, server
    finally:
        stop_process_group(server)
        for line in running(sessions):  # only after a failed test
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(line.split()[0]), signal.SIGKILL)
        log.close()


@needs_chromium
async def test_the_demo_in_headless_chromium_paints_takes_keys_and_stops(tmp_path: Path) -> None:
    assert CHROMIUM is not None
    session: set[int] = set()
    with served_demo(tmp_path, session) as (url, server):
        async with Chromium(CHROMIUM, tmp_path / "profile") as browser:
            blank = await browser.screenshot(tmp_path / "blank.png")
            await browser.open(url)
            # The demo plans, proposes step 1 and runs its tests: the app's own words, painted
            # by xterm.js from what the app process sent.
            await browser.wait_for_text("review step 1 (tests pass)", timeout=120)
            await browser.wait_for_text("Reject", timeout=30)  # the key footer
            painted = await browser.screenshot(tmp_path / "serve-demo.png")
            # A blank page of the same size compresses to a few KB; the app's screen does not.
            assert len(painted) > 5 * len(blank), (len(painted), len(blank))

            seen = len(browser.received)
            await browser.focus_terminal()
            await browser.press("r")  # reject: the app asks what should change
            await browser.wait_for_text("What should change?", timeout=60, since=seen)
            asked = await browser.screenshot(tmp_path / "serve-reject.png")
            assert asked != painted

            # Ctrl+C where `serve` runs: SIGINT to its process group. The server stops at once
            # and ends the session (its processes are outside that group) through its tab.
            session.update(descendants(server.pid))
            assert session, "no session process under the server"
            stopping = time.monotonic()
            os.killpg(server.pid, signal.SIGINT)
            assert server.wait(timeout=60) == 0
            assert time.monotonic() - stopping < 10  # not a wait for the tab to go quiet
            assert wait_all_gone(session, timeout=60) == []
    # Each session cleaned up after itself: no shadow worktree is left behind.
    assert shadow_worktrees() == []


def shadow_worktrees() -> list[Path]:
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "tui-engineer" / "worktrees"
    return [p for p in folder.glob("*/*") if p.is_dir()]


async def read_until(ws: aiohttp.ClientWebSocketResponse, text: str, timeout: float) -> None:
    """Read the app's terminal output, as textual-serve's page does, until `text` shows."""
    seen = ""
    async with asyncio.timeout(timeout):
        while text not in terminal_text(seen):
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.BINARY:  # screen output; TEXT is metadata
                seen += message.data.decode("utf-8", "replace")
            elif message.type != aiohttp.WSMsgType.TEXT:
                raise AssertionError(f"the session ended first: {terminal_text(seen)[-500:]!r}")


async def test_sessions_stop_cleanly_when_the_server_is_killed(tmp_path: Path) -> None:
    """kill -9 (or a crash) gives the server no chance to end its sessions; they notice."""
    session: set[int] = set()
    with served_demo(tmp_path, session) as (url, server):
        # A tab's websocket, without a browser: the server starts a session for it.
        ws_url = url.replace("http://", "ws://") + "ws?width=120&height=36"
        async with aiohttp.ClientSession() as http, http.ws_connect(ws_url) as ws:
            await read_until(ws, "review step 1 (tests pass)", timeout=120)
            session.update(descendants(server.pid))
            assert shadow_worktrees(), "the session has a shadow worktree while it runs"
            server.kill()
            server.wait(timeout=30)
            assert wait_all_gone(session, timeout=60) == []
    assert shadow_worktrees() == []
