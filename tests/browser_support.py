"""A real headless Chromium driven over the Chrome DevTools Protocol, for `tui-engineer serve`.

Why CDP by hand: it needs nothing beyond the system `chromium` and aiohttp (already installed,
textual-serve runs on it): no driver binary matching the browser's version (selenium), no
browser download (playwright). The protocol calls used here are few and stable: navigate,
screenshot, key events, and the websocket frames the page receives, which carry the app's
terminal output (xterm.js paints it on a canvas, so the text is not in the DOM)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# Escape sequences in the terminal stream: CSI (colours, cursor moves), OSC, and two-byte ones.
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def find_chromium() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def terminal_text(raw: str) -> str:
    """The printable text of a terminal stream (what a reader of the screen could see)."""
    return ANSI.sub("", raw)


def stop_process_group(proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """SIGTERM the group `proc` leads, then SIGKILL whatever is left after `timeout`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass
    if not group_gone(proc.pid, timeout):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)


def group_gone(pgid: int, timeout: float) -> bool:
    """Whether every process of group `pgid` has exited within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.2)
    return False


class Chromium:
    """`async with Chromium(binary, profile) as browser:` one headless page, driven over CDP."""

    def __init__(self, binary: str, profile: Path, size: tuple[int, int] = (1280, 800)) -> None:
        self.binary = binary
        self.profile = profile
        self.size = size
        self.proc: subprocess.Popen[bytes] | None = None
        self.received = ""  # the decoded terminal stream the page got from its websocket
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._http: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Chromium:
        self.profile.mkdir(parents=True, exist_ok=True)
        # A reused profile keeps the last run's port here; only this run's may be read.
        (self.profile / "DevToolsActivePort").unlink(missing_ok=True)
        width, height = self.size
        args = [
            self.binary,
            "--headless=new",
            "--no-sandbox",  # the test may run as root (CI containers), where the sandbox refuses
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            # Only 127.0.0.1 resolves: the page's web font request fails at once, offline or not.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            await self._connect()
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._ws is not None:
            await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self.proc is not None:
            await asyncio.to_thread(stop_process_group, self.proc)

    async def _connect(self, timeout: float = 60) -> None:
        port = await self._debugging_port(timeout)
        self._http = aiohttp.ClientSession()
        async with self._http.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        page = next(t for t in targets if t["type"] == "page")
        self._ws = await self._http.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        await self.send("Page.enable")
        await self.send("Network.enable")

    async def _debugging_port(self, timeout: float) -> int:
        """Chromium writes the port it picked into DevToolsActivePort once it listens."""
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode} at start")
            if marker.exists() and (first := marker.read_text().split("\n")[0].strip()):
                return int(first)
            await asyncio.sleep(0.2)
        raise TimeoutError(f"chromium did not open its debugging port in {timeout} s")

    async def _read(self) -> None:
        assert self._ws is not None
        async for message in self._ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data = message.json()
            if "id" in data and (future := self._pending.pop(data["id"], None)):
                if not future.done():
                    future.set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                self._on_frame(data["params"]["response"])

    def _on_frame(self, frame: dict[str, Any]) -> None:
        payload = frame.get("payloadData", "")
        if frame.get("opcode") == 2:  # binary: base64 in CDP; textual-serve sends output so
            payload = base64.b64decode(payload).decode("utf-8", "replace")
        self.received += payload

    async def send(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        assert self._ws is not None
        call_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._ws.send_json({"id": call_id, "method": method, "params": params})
        reply = await asyncio.wait_for(future, timeout)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def open(self, url: str) -> None:
        await self.send("Page.navigate", url=url)

    async def wait_for_text(self, text: str, timeout: float, since: int = 0) -> None:
        """Wait until `text` shows in the terminal stream (after character `since` of it)."""
        deadline = time.monotonic() + timeout
        while text not in terminal_text(self.received[since:]):
            if time.monotonic() > deadline:
                tail = terminal_text(self.received)[-2000:]
                raise TimeoutError(f"{text!r} not on the page after {timeout} s; saw: {tail!r}")
            await asyncio.sleep(0.2)

    async def screenshot(self, path: Path) -> bytes:
        result = await self.send("Page.captureScreenshot", format="png")
        data = base64.b64decode(result["data"])
        path.write_bytes(data)
        return data

    async def press(self, key: str) -> None:
        """Type one printable character, as a keyboard would (keydown with text, then keyup)."""
        code = f"Key{key.upper()}" if key.isalpha() else ""
        common = {"key": key, "code": code, "windowsVirtualKeyCode": ord(key.upper())}
        await self.send("Input.dispatchKeyEvent", type="keyDown", text=key, **common)
        await self.send("Input.dispatchKeyEvent", type="keyUp", **common)

    async def focus_terminal(self) -> None:
        """Give xterm.js's input element the keyboard focus, as a click on the terminal would
        (a real click could land on a widget of the app and do something)."""
        await self.send(
            "Runtime.evaluate",
            expression="document.querySelector('.xterm-helper-textarea').focus()",
        )
