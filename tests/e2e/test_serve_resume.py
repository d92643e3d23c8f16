"""`tui-engineer serve --resume`: the first browser tab goes on with the stopped session; a tab
opened while it is open is told another session works on the repository (one repository, one
live session) instead of a "still running" error; once that tab is closed, a new tab resumes it
again. A real `serve` process,
tabs as textual-serve's page opens them (a websocket each), a session really stopped by
`tui-engineer run` on a real repository, the model over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from pathlib import Path

import aiohttp

from tests.browser_support import stop_process_group, terminal_text
from tests.e2e.test_serve import descendants, free_port, wait_all_gone, wait_until_up
from tests.engine_support import KEY, SUB
from tests.scripted_server import Reply, ScriptedServer
from tests.timing_support import run_answering


def stopped_at_review(repo: Path, server: ScriptedServer) -> None:
    """A session stopped with step 1 under review (answered 't' on the terminal)."""
    done = run_answering(repo, server, "add sub", "t\n", "--no-plan", timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr


class Tab:
    """A browser tab's websocket to the server: what its terminal showed so far."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws, self.raw = ws, ""

    @property
    def text(self) -> str:
        return terminal_text(self.raw)

    async def until(self, *texts: str, timeout: float = 60) -> None:
        try:
            async with asyncio.timeout(timeout):
                while not all(t in self.text for t in texts):
                    message = await self.ws.receive()
                    if message.type == aiohttp.WSMsgType.BINARY:  # screen output
                        self.raw += message.data.decode("utf-8", "replace")
                    elif message.type != aiohttp.WSMsgType.TEXT:
                        raise AssertionError(f"the tab's session ended: {self.text[-800:]!r}")
        except TimeoutError:
            raise AssertionError(f"no {texts} in the tab: {self.text[-1500:]!r}") from None

    async def until_closed(self, timeout: float = 60) -> None:
        """Until the tab's session ended and the server closed its websocket."""
        kinds = (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
        async with asyncio.timeout(timeout):
            with contextlib.suppress(aiohttp.ClientConnectionResetError):
                while (await self.ws.receive()).type in kinds:
                    pass


async def test_serve_resume_resumes_in_one_tab_and_starts_new_sessions_in_others(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    scripted_server.script(Reply(text=SUB))
    stopped_at_review(repo, scripted_server)
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "tui_engineer", "serve", "--port", str(port), "--resume"]
    command += ["--base-url", scripted_server.base_url, "--model", "test-model"]
    server = subprocess.Popen(
        command, cwd=repo, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )  # fmt: skip
    ws_url = f"ws://127.0.0.1:{port}/ws?width=140&height=40"
    try:
        wait_until_up(f"http://127.0.0.1:{port}/", server)
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(ws_url) as first:
                one = Tab(first)
                await one.until("Resuming session", "review step 1")  # shown again, as it was
                async with http.ws_connect(ws_url) as second:
                    two = Tab(second)
                    # One repository, one live session: told at its start (issue 37 §2).
                    await two.until("Another session works on this repository")
                    assert "still running" not in two.text
                    assert "Resuming session" not in two.text
                    tabs = descendants(server.pid)
            # Both tabs closed, their sessions stopped (the resumed one resumable again): a
            # new tab resumes it.
            assert await asyncio.to_thread(wait_all_gone, tabs, 60) == []
            async with http.ws_connect(ws_url) as third:
                await Tab(third).until("Resuming session", "review step 1", timeout=180)
    finally:
        stop_process_group(server)
        log.close()
    assert len(scripted_server.chat_requests) == 1  # shown again: no new model call


def test_a_tab_that_does_not_resume_drops_resume_and_the_session_it_names() -> None:
    from tui_engineer.cli.web_tab import _without_resume

    assert _without_resume(["--resume", "--model", "m"]) == ["--model", "m"]
    assert _without_resume(["--resume", "20260101-abc", "-C", "r"]) == ["-C", "r"]
    assert _without_resume(["--resume=20260101-abc"]) == []
