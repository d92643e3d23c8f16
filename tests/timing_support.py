"""A real model's and a real user's timing in tests (DESIGN.md invariant 8): the scripted model
holds a reply at a Gate until the test opens it, a pre-commit hook runs as long as the test
wants, and `tui-engineer run` runs as a real process that the test stops with signals.

The session most such tests share plans two steps, Add sub then Add mul, and holds step 2's
reply (`hold_step_2`): the step prepared ahead while step 1 is reviewed, or written once step 1
is accepted, is in flight for as long as the test wants.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

from tests.conftest import git
from tests.engine_support import KEY, MUL_ON_SUB, SUB, plan_reply, run_headless
from tests.scripted_server import Gate, Reply, ScriptedServer
from tui_engineer.engine import events as ev

# Seconds a test waits for something that should happen at once, before failing. 30 was cut
# at load 15-20 on 2 cores (a whole session's subprocess, resumed: three resume tests failed).
REACHED = 60


def hold_step_2(server: ScriptedServer, step_2: str = MUL_ON_SUB, *later: Reply) -> Gate:
    """Script "add sub and mul": the plan (Add sub, Add mul), step 1's edit (SUB), then step
    2's edit (`step_2`) held until the returned gate opens; `later` replies after it."""
    gate = Gate()
    server.script(
        Reply(text=plan_reply("Add sub", "Add mul")),
        Reply(text=SUB),
        Reply(text=step_2, hold=gate),
        *later,
    )
    return gate


def hold_step_1(server: ScriptedServer) -> Gate:
    """Script "add sub and mul": the plan (Add sub, Add mul), then step 1's edit (SUB) held
    until the returned gate opens (a test stops the server meanwhile, say)."""
    gate = Gate()
    server.script(Reply(text=plan_reply("Add sub", "Add mul")), Reply(text=SUB, hold=gate))
    return gate


def titles(repo: Path) -> list[str]:
    """The branch's commit subjects, newest first."""
    return git(repo, "log", "--format=%s").splitlines()


def slow_hook(repo: Path) -> tuple[Path, Path]:
    """A pre-commit hook that says it started (`reached`) and waits until `release` exists:
    a 6 s hook, as long as the test wants."""
    reached, release = repo.parent / "hook-reached", repo.parent / "hook-release"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        f"#!/bin/sh\ntouch '{reached}'\nwhile [ ! -e '{release}' ]; do sleep 0.02; done\nexit 0\n"
    )
    hook.chmod(0o755)
    return reached, release


async def wait_for_file(path: Path) -> None:
    for _ in range(REACHED * 50):
        if path.exists():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path.name} never appeared")


def wait_for_file_now(path: Path) -> None:
    """`wait_for_file` for a test without an event loop (one driving a process)."""
    for _ in range(REACHED * 50):
        if path.exists():
            return
        time.sleep(0.02)
    raise AssertionError(f"{path.name} never appeared")


# ----- a real `tui-engineer run` process, stopped by signals (started in a session of its own,
# as a supervisor or a CI runner starts it: the signal reaches it, not its hooks)


@contextlib.asynccontextmanager
async def session_in_a_slow_hook(
    repo: Path, server: ScriptedServer, refusal: str = ""
) -> AsyncIterator[tuple[asyncio.Future, list[ev.Event], Path]]:
    """A headless session "add sub" (no plan, accepted at once) whose commit's pre-commit hook
    runs when the block starts: the session, the events it told so far and the hook's `release`
    file (touched at the end whatever happens). With `refusal`, the hook then says it and
    refuses the commit."""
    reached, release = slow_hook(repo)
    if refusal:
        hook = repo / ".git" / "hooks" / "pre-commit"
        hook.write_text(hook.read_text().replace("exit 0", f"echo '{refusal}' >&2; exit 1"))
    server.script(Reply(text=SUB))
    seen: list[ev.Event] = []
    session = asyncio.ensure_future(
        # The accept's hook is the one waited on: not the check before review (a run in the
        # sandbox, which cannot see `release`).
        run_headless(
            repo,
            "add sub",
            server.base_url,
            sink=seen.append,
            plan=False,
            commit_hook_check=False,
        )
    )
    try:
        await wait_for_file(reached)
        yield session, seen, release
    finally:
        release.touch()


class RunProcess:
    """`tui-engineer run REQUEST --yes --json` in its own session; its JSON events are read
    as they come. No REQUEST (None): the flags say what to do (`--resume`). `kill_at`: an
    event type at whose line the process group is SIGKILLed the moment it is read (a kill at
    that announcement, before anything else happens)."""

    def __init__(
        self,
        repo: Path,
        server: ScriptedServer,
        request: str | None,
        *flags: str,
        kill_at: str | None = None,
    ) -> None:

        command = [sys.executable, "-m", "tui_engineer", "run", *([request] if request else [])]
        command += ["--yes", "--json"]
        command += ["--base-url", server.base_url, "--model", "test-model", *flags]
        env = {**os.environ, "OPENAI_API_KEY": "sk-test-secret-key-0123456789"}
        self.proc = subprocess.Popen(
            command, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
        )  # fmt: skip
        self.events: list[dict] = []
        self._new = threading.Condition()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                event = json.loads(line)
                if kill_at is not None and event["type"] == kill_at:
                    self.kill()
                with self._new:
                    self.events.append(event)
                    self._new.notify_all()

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()

    def wait_event(self, kind: str, **fields: object) -> dict:
        def found() -> dict | None:
            return next(
                (
                    e for e in self.events
                    if e["type"] == kind and all(e.get(k) == v for k, v in fields.items())
                ),
                None,
            )  # fmt: skip

        with self._new:
            if not self._new.wait_for(
                lambda: found() is not None or self.proc.poll() is not None, REACHED
            ):
                raise AssertionError(f"no {kind} event within {REACHED} s")
        event = found()
        assert event is not None, f"the run ended without a {kind} event: {self.events}"
        return event

    def finish(self) -> tuple[int, str]:
        """Its exit code and stderr, once it ended and every JSON line was read."""
        self.proc.wait(timeout=REACHED)
        self._reader.join(timeout=5)
        assert self.proc.stderr is not None
        return self.proc.returncode, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def run_to_the_end(
    repo: Path, server: ScriptedServer, request: str | None, *flags: str
) -> tuple[int, str, RunProcess]:
    """A RunProcess left to finish (killed if it does not): its exit code, stderr and events."""
    run = RunProcess(repo, server, request, *flags)
    try:
        code, err = run.finish()
    finally:
        run.kill()
    return code, err, run


def run_answering(
    repo: Path,
    server: ScriptedServer,
    request: str,
    answers: str,
    *flags: str,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """`tui-engineer run REQUEST FLAGS` in `repo` at a terminal where the human types `answers`
    (a line for each question the review asks), run to its end: its exit code and output."""
    command = [sys.executable, "-m", "tui_engineer", "run", request, *flags]
    command += ["--base-url", server.base_url, "--model", "test-model"]
    return subprocess.run(
        command, cwd=repo, input=answers, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "OPENAI_API_KEY": KEY},
    )  # fmt: skip


def plan_calls(server: ScriptedServer) -> int:
    """How many of the model calls the server answered asked for a plan (engine/prompts.py's
    plan_messages): a resumed or reattached session makes none."""
    return sum(
        1
        for r in server.chat_requests
        if any("Request from the human:" in str(m.get("content")) for m in r.messages)
    )


def accepted_into_a_slow_hook(repo: Path, server: ScriptedServer) -> tuple[RunProcess, Path]:
    """`tui-engineer run "add sub" --no-plan --yes`, its step accepted and its commit's
    pre-commit hook running until the returned `release` file exists."""
    reached, release = slow_hook(repo)
    server.script(Reply(text=SUB))
    # The accept's hook is the one waited on (the check before review cannot see `release`).
    run = RunProcess(repo, server, "add sub", "--no-plan", "--no-commit-hook-check")
    try:
        run.wait_event("decision", step=1, decision="accept")
        wait_for_file_now(reached)
    except BaseException:
        release.touch()
        run.kill()
        raise
    return run, release
