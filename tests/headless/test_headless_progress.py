"""Headless progress while the model thinks: a live "waiting for the model" line with the time
and the tokens so far, on a terminal and in a CI log."""

from __future__ import annotations

import errno
import io

import pytest

from tests.engine_support import SUB, run_headless
from tests.scripted_server import Reply
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.headless.printer import ProgressPrinter


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
async def test_a_terminal_sees_the_wait_grow(make_repo, scripted_server) -> None:
    scripted_server.script(Reply(text=SUB, delay=2.5))
    out = Terminal()
    result, _ = await run_headless(
        make_repo(), "add sub", scripted_server.base_url, plan=False, sink=ProgressPrinter(out)
    )
    assert result.exit_code == 0
    assert "step 1 · waiting for the model: propose · 2 s" in out.getvalue()


@whole_session
async def test_a_log_gets_a_line_while_a_slow_model_thinks(make_repo, scripted_server) -> None:
    scripted_server.script(Reply(text=SUB, delay=2.5))
    out = io.StringIO()
    printer = ProgressPrinter(out, log_every=1.0)
    result, _ = await run_headless(
        make_repo(), "add sub", scripted_server.base_url, plan=False, sink=printer
    )
    assert result.exit_code == 0
    assert "step 1 · waiting for the model: propose · 2 s" in out.getvalue()


class HungUp(Terminal):
    """A terminal after its window closed: every write fails with EIO."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")


def test_a_closed_terminal_does_not_fail_the_session_that_prints_to_it() -> None:
    # The hang-up can come just before the SIGHUP that the run answers by detaching from the
    # terminal: a progress line written in between must not end the session with an OSError.
    printer = ProgressPrinter(HungUp())
    printer(ev.StepStarted(index=1, title="Add sub"))
    printer(ev.SessionFinished(outcome="quit", commits=(), message=""))


def test_other_write_errors_are_still_raised() -> None:
    class Full(Terminal):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        ProgressPrinter(Full())(ev.StepStarted(index=1, title="Add sub"))


def test_a_slow_shadow_is_said_with_what_it_was() -> None:
    """Issue 47: the wait before a session starts on a big repository is explained: a first
    shadow is a full checkout (the next ones come from a spare); a quick one is not worth a
    line."""
    out = io.StringIO()
    printer = ProgressPrinter(out)
    printer(ev.ShadowReady(seconds=9.6, from_spare=False))
    printer(ev.ShadowReady(seconds=0.3, from_spare=True))
    printer(ev.ShadowReady(seconds=1.4, from_spare=True))
    lines = out.getvalue().splitlines()
    assert lines == [
        "  shadow worktree: a full checkout (the next ones reuse it), 9.6 s",
        "  shadow worktree: from a spare, 1.4 s",
    ]
