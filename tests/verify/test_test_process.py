"""run_command for real: /bin/sh subprocesses, process groups, timeouts, streaming, caps, env."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from tui_engineer.verify import run_command, scrubbed_env

PY = sys.executable


def pid_alive(pid: int) -> bool:
    """True if `pid` runs. A zombie counts as gone: it was killed, only not yet reaped by init."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def gone_soon(pids: list[int], timeout: float = 2.0) -> bool:
    """Signals are asynchronous: a killed process may need a moment to finish exiting."""
    deadline = time.monotonic() + timeout
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return not any(pid_alive(p) for p in pids)


async def wait_for_file(path: Path, timeout: float = 5.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_exit_code_and_merged_output(tmp_path: Path) -> None:
    result = await run_command("echo out; echo err >&2; exit 3", tmp_path, timeout=10)
    assert result.exit_code == 3
    assert not result.timed_out
    assert result.output.splitlines() == ["out", "err"]
    assert not result.truncated


async def test_runs_in_cwd_with_stdin_closed(tmp_path: Path) -> None:
    # A test that reads stdin must get EOF at once, not hang waiting for the user's keyboard.
    result = await run_command("pwd; cat; echo after-cat", tmp_path, timeout=5)
    assert result.output.splitlines() == [str(tmp_path), "after-cat"]


async def test_output_streams_before_the_process_ends(tmp_path: Path) -> None:
    # The script waits until the callback has seen its first line: without streaming it would
    # never print "second" and would time out.
    go = tmp_path / "go"
    script = (
        "import os, sys, time\n"
        "print('first', flush=True)\n"
        f"deadline = time.time() + 5\n"
        f"while not os.path.exists({str(go)!r}) and time.time() < deadline:\n"
        "    time.sleep(0.01)\n"
        f"print('second' if os.path.exists({str(go)!r}) else 'not streamed')\n"
    )
    (tmp_path / "s.py").write_text(script)
    seen: list[str] = []

    def on_output(line: str) -> None:
        seen.append(line)
        if line == "first":
            go.touch()

    result = await run_command(f"{PY} s.py", tmp_path, timeout=10, on_output=on_output)
    assert seen == ["first", "second"]
    assert result.exit_code == 0


async def test_very_long_line_is_streamed_in_pieces(tmp_path: Path) -> None:
    seen: list[str] = []
    cmd = f"{PY} -c \"print('x' * 1_000_000); print('end')\""
    result = await run_command(cmd, tmp_path, timeout=10, on_output=seen.append)
    assert seen[-1] == "end"
    assert "".join(seen[:-1]) == "x" * 1_000_000
    assert max(len(piece) for piece in seen) < 1_000_000
    assert result.exit_code == 0


async def test_invalid_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    seen: list[str] = []
    result = await run_command(
        r"printf 'bad \377\376 ok\n'", tmp_path, timeout=5, on_output=seen.append
    )
    assert seen == ["bad \ufffd\ufffd ok"]
    assert "\ufffd" in result.output and "ok" in result.output


async def test_output_is_capped_keeping_head_and_tail(tmp_path: Path) -> None:
    cmd = f"echo START; {PY} -c \"import sys; sys.stdout.write('x' * 10_000_000)\"; echo; echo END"
    result = await run_command(cmd, tmp_path, timeout=20, output_cap_bytes=100_000)
    assert result.truncated
    assert len(result.output) < 101_000
    assert result.output.startswith("START\n")
    assert result.output.rstrip().endswith("END")
    total = len("START\n") + 10_000_000 + len("\nEND\n")
    assert f"[... {total - 100_000} bytes dropped ...]" in result.output


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    cmd = f"sleep 1000 & echo $! > {pidfile}; sleep 1000"
    started = time.monotonic()
    result = await run_command(cmd, tmp_path, timeout=1)
    assert time.monotonic() - started < 4
    assert result.timed_out
    assert result.exit_code is None
    assert await gone_soon([int(pidfile.read_text())])


async def test_process_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    cmd = "trap '' TERM; echo ready; while :; do sleep 0.1; done"
    started = time.monotonic()
    result = await run_command(cmd, tmp_path, timeout=0.5)
    assert result.timed_out
    assert time.monotonic() - started < 4
    assert "ready" in result.output


async def test_cancelling_the_task_kills_the_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    cmd = f"sleep 1000 & echo $$ $! > {pidfile}; sleep 1000"
    task = asyncio.create_task(run_command(cmd, tmp_path, timeout=60))
    pids = [int(p) for p in (await wait_for_file(pidfile)).split()]
    assert all(pid_alive(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone_soon(pids)


async def test_background_leftovers_die_when_the_command_ends(tmp_path: Path) -> None:
    # A test suite that forgets a server running must neither hang the run nor outlive it.
    pidfile = tmp_path / "bg.pid"
    started = time.monotonic()
    result = await run_command(f"sleep 1000 & echo $! > {pidfile}; echo done", tmp_path, timeout=30)
    assert time.monotonic() - started < 5
    assert result.exit_code == 0 and not result.timed_out
    assert "done" in result.output
    assert await gone_soon([int(pidfile.read_text())])


def test_scrubbed_env_removes_secret_looking_names() -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "PYTHONPATH": "/x",
        "LANG": "C.UTF-8",
        "OPENAI_API_KEY": "sk-1",
        "OPENAI_BASE_URL": "http://llm",
        "ANTHROPIC_API_KEY": "a",
        "GITHUB_TOKEN": "t",
        "AWS_ACCESS_KEY_ID": "k",
        "AWS_SECRET_ACCESS_KEY": "s",
        "DB_PASSWORD": "p",
        "DJANGO_SECRET_KEY": "d",
        "STRIPE_KEY": "st",
        "MY_LLM_ACCESS": "custom",
    }
    env = scrubbed_env(base, extra_secret_names=["my_llm_access"])
    assert env == {
        "PATH": "/usr/bin", "HOME": "/home/u", "PYTHONPATH": "/x", "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",  # added: a suite's progress arrives as it is written
    }  # fmt: skip


async def test_child_process_cannot_see_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-value")
    monkeypatch.setenv("SERVICE_TOKEN", "tok-very-secret-value")
    result = await run_command("env", tmp_path, timeout=5)  # default env: scrubbed os.environ
    assert "very-secret-value" not in result.output
    assert f"PATH={os.environ['PATH']}" in result.output.splitlines()


async def test_colour_escapes_are_taken_out_of_the_lines_and_the_output(tmp_path: Path) -> None:
    """A runner asked for colour (zope-testrunner -c): the human's lines and the output read
    for tails and prompts hold the text, not `\\x1b[31m` (issue 48, part 5)."""
    lines: list[str] = []
    command = r"printf '\033[1;31mFailure in test\033[0m x\n"
    command += r"\033]0;title\007  Ran \033[32m1\033[0m\n'"
    result = await run_command(command, tmp_path, timeout=10, on_output=lines.append)
    assert lines == ["Failure in test x", "  Ran 1"]
    assert result.output == "Failure in test x\n  Ran 1\n"
