"""One repository, one live session across `tui-engineer serve` tabs (issue 37 §2), with a real
`serve` process, tabs opened as textual-serve's page opens them (a websocket each, keys sent as
the page sends them), a real repository and the model over HTTP, holding step 2's reply as a
slow model does:

- a second tab is told that another tab holds the session, naming it; quitting there leaves the
  first tab alone, and a third tab's take-over stops the first tab's session cleanly and shows
  it, as it was, in the new tab: one plan call in all;
- a reload mid-session goes on with the session in the new tab: no second plan call.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from tests.browser_support import stop_process_group
from tests.e2e.test_serve import descendants, free_port, running, wait_all_gone, wait_until_up
from tests.e2e.test_serve_resume import Tab
from tests.engine_support import KEY, MUL_ON_SUB
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.timing_support import hold_step_2, plan_calls, titles


@asynccontextmanager
async def served(
    repo: Path, server: ScriptedServer, tmp_path: Path, *args: str
) -> AsyncIterator[tuple[aiohttp.ClientSession, str, subprocess.Popen[bytes]]]:
    """`tui-engineer serve ARGS` on `repo` with the scripted model; an HTTP client; the
    websocket address a tab's page opens."""
    port = free_port()
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "tui_engineer", "serve", "--port", str(port), *args]
    command += ["--base-url", server.base_url, "--model", "test-model"]
    proc = subprocess.Popen(
        command, cwd=repo, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )  # fmt: skip
    try:
        wait_until_up(f"http://127.0.0.1:{port}/", proc)
        async with aiohttp.ClientSession() as http:
            yield http, f"ws://127.0.0.1:{port}/ws?width=140&height=40", proc
    finally:
        stop_process_group(proc)
        log.close()


async def press(tab: Tab, key: str) -> None:
    """A key typed in the tab, as textual-serve's page sends it."""
    await tab.ws.send_str(json.dumps(["stdin", key]))


async def accept(tab: Tab, repo: Path) -> None:
    """`a`, until step 1 is committed: the app takes no decision key in the first half second
    a proposal is shown (tui/panes/diff_pane.py), and a tab cannot see when that half second
    began."""
    for _ in range(20):
        await press(tab, "a")
        for _ in range(50):
            if titles(repo)[0] == "Add sub":
                return
            await asyncio.sleep(0.1)
    raise AssertionError("step 1 was never committed")


async def test_a_second_tab_is_told_and_a_take_over_moves_the_session_to_the_new_tab(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    gate = hold_step_2(scripted_server)  # step 2 prepared ahead, slow as a real model
    again = Gate()
    scripted_server.script(Reply(text=MUL_ON_SUB, hold=again))  # the new tab's step 2
    try:
        async with served(repo, scripted_server, tmp_path, "add sub and mul") as (http, url, srv):
            async with http.ws_connect(url) as first_ws:
                first = Tab(first_ws)
                await first.until("review step 1")
                holder = descendants(srv.pid)
                async with http.ws_connect(url) as second_ws:
                    second = Tab(second_ws)
                    await second.until("Another session works on this repository", "Take over")
                    assert any(f"process {pid}" in second.text for pid in holder)
                    await press(second, "q")  # quit: leave it alone
                    await second.until_closed()
                assert running(holder), "quitting the second tab stopped the first one"
                assert plan_calls(scripted_server) == 1
                async with http.ws_connect(url) as third_ws:
                    third = Tab(third_ws)
                    await third.until("Take over")
                    asked = time.monotonic()
                    await press(third, "t")
                    await third.until("Took over session", "review step 1", timeout=120)
                    shown = time.monotonic() - asked
                    again.open()  # step 2, prepared ahead here, answers
                    await first.until_closed()  # the first tab's session ended there
                    assert wait_all_gone(holder, 30) == []
                    print(f"take over -> session shown in the new tab: {shown:.2f} s")
                    await accept(third, repo)  # the session goes on here: step 1 is committed
                    await third.until("review step 2", timeout=120)
                    assert titles(repo) == ["Add sub", "initial"]
    finally:
        gate.open()
        again.open()
    assert plan_calls(scripted_server) == 1  # the session planned once, in the first tab


async def test_a_reload_mid_session_goes_on_with_the_session_instead_of_planning_again(
    make_repo, scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    repo = make_repo()
    gate = hold_step_2(scripted_server)
    again = Gate()
    scripted_server.script(Reply(text=MUL_ON_SUB, hold=again))  # step 2, asked again
    try:
        async with served(repo, scripted_server, tmp_path, "add sub and mul") as (http, url, srv):
            async with http.ws_connect(url) as before_ws:
                await Tab(before_ws).until("review step 1")
                old = descendants(srv.pid)
            reloaded = time.monotonic()  # the page's old websocket closed; its new one opens
            async with http.ws_connect(url) as after_ws:
                after = Tab(after_ws)
                await after.until("goes on with session", "review step 1", timeout=120)
                print(f"reload -> session shown again: {time.monotonic() - reloaded:.2f} s")
                assert "Another session works on this repository" not in after.text
                assert wait_all_gone(old, 30) == []
    finally:
        gate.open()
        again.open()
    assert plan_calls(scripted_server) == 1  # no second plan call for the reload
