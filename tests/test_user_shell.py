"""The human's `!command` shell: cd and export persist, stop ends a command and its children,
and what goes to the model is the tail with secrets masked."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tui_engineer.base.user_shell import MASKED, ShellRun, UserShell, own_words
from tui_engineer.bench.dataset import export


def _run(shell: UserShell, command: str) -> tuple[str, object]:
    chunks: list[str] = []
    result = asyncio.run(shell.run(command, chunks.append))
    return "".join(chunks), result


def test_cd_and_export_persist_between_commands(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    shell = UserShell(tmp_path)
    _run(shell, "cd sub && export GREETING=hello-there")
    shown, result = _run(shell, 'pwd; echo "$GREETING"; exit 3')
    assert shown.splitlines() == [str(tmp_path / "sub"), "hello-there"]
    assert result.status == 3
    # `exit` in a command still leaves the state for the next one.
    shown, _ = _run(shell, "pwd")
    assert shown.strip() == str(tmp_path / "sub")


def test_stop_ends_the_command_and_its_children(tmp_path: Path) -> None:
    shell = UserShell(tmp_path)

    async def scenario() -> tuple[object, float]:
        started = time.monotonic()
        task = asyncio.create_task(shell.run("sleep 30 & sleep 30; echo never", lambda _: None))
        await asyncio.sleep(0.5)
        shell.stop()
        return await asyncio.wait_for(task, 10), time.monotonic() - started

    result, took = asyncio.run(scenario())
    assert result.status is None and result.outcome == "stopped"
    assert "never" not in result.output
    assert took < 5


def test_the_model_gets_the_tail_with_secrets_masked(tmp_path: Path) -> None:
    shell = UserShell(tmp_path, {"PATH": "/usr/bin:/bin", "MY_API_TOKEN": "tok-1234567890"})
    _, result = _run(shell, 'seq 1 5000; echo "token is $MY_API_TOKEN"; false')
    sent = result.attachment(tail_chars=200)
    assert sent.startswith("The human ran this command in the repository (exit status 1):\n")
    assert "$ seq 1 5000;" in sent
    assert "tok-1234567890" not in sent and f"token is {MASKED}" in sent
    assert "5000\n" in sent and "\n1\n" not in sent and "earlier output left out" in sent


def test_a_progress_bar_redrawn_with_carriage_returns_keeps_its_last_state(tmp_path: Path) -> None:
    _, result = _run(UserShell(tmp_path), r"printf 'get 10%%\rget 60%%\rget 100%%\ndone\n'")
    assert "get 100%\ndone" in result.attachment()
    assert "get 10%" not in result.attachment().split("\n", 2)[2]  # after the command line


def test_a_secret_the_shell_masks_is_masked_in_the_bench_export_too(
    tmp_path: Path, monkeypatch
) -> None:
    # One rule for both: a credentials variable (no KEY or TOKEN in its name) was masked in what
    # the shell sent to the model but written out whole by `bench export`.
    value = "svc-account-7f3a9c2e41"
    monkeypatch.setenv("GCP_CREDENTIALS", value)
    _, result = _run(UserShell(tmp_path), 'echo "using $GCP_CREDENTIALS"')
    assert value not in result.attachment() and f"using {MASKED}" in result.attachment()
    out = tmp_path / "rows.jsonl"
    export([{"source": "session", "request": f"deploy with {value}", "events": []}], out)
    assert value not in out.read_text() and "deploy with [redacted]" in out.read_text()


def test_an_answer_is_named_by_the_humans_words_not_the_output_sent_with_it() -> None:
    run = ShellRun("pytest -x", "1 failed\nE   assert 5 == -1\n", 1, "/repo")
    assert own_words(f"mul is missing\n\n{run.attachment()}") == "mul is missing"
    assert own_words(run.attachment()) == "$ pytest -x"  # the output alone: its command
    assert own_words("  mul is missing\n") == "mul is missing"
