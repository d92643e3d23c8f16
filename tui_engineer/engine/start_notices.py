"""What a session says before its first step, after SessionStarted: how its steps are verified
(or that they are not), the project's own checks, the context window the server told."""

from __future__ import annotations

import contextlib

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.review import UNVERIFIED
from tui_engineer.engine.runtime import Runtime


def start_notices(rt: Runtime) -> list[str]:
    """Said at once: how steps are verified, the project's own checks."""
    return _mode_notices(rt) + _checks_notice(rt)


async def say_window(rt: Runtime) -> None:
    """`window_notices`, said when the server has told. A failure to ask is not said here: the
    first prompt waits for the same asking and stops the session with it."""
    with contextlib.suppress(Exception):
        for sentence in await window_notices(rt):
            rt.emit(ev.Notice(message=sentence))


async def window_notices(rt: Runtime) -> list[str]:
    """The context window the server told (with where it said it, and its warning: Ollama cuts
    longer prompts silently), when the config sets none. An assumed one is not news: doctor and
    the errors about it say to set context_window. Asked beside the session's start (the
    baseline, the map): the first prompt waits for the same asking, nothing else does."""
    learn = getattr(rt.model, "learn_context_window", None)
    if learn is None:
        return []  # a replayed run: no server
    await learn()
    report = getattr(rt.model, "window_report", None)
    if report is None or report.origin != "server":
        return []
    told = f"Context window: {report.describe()}; set context_window to change it."
    return [told, report.warning] if report.warning else [told]


def _checks_notice(rt: Runtime) -> list[str]:
    """The project's own checks, said at the start beside the test command, each with why."""
    checks = rt.options.declared_checks
    if not checks:
        return []
    listed = "; ".join(f"{c.name} ({c.reason})" for c in checks)
    return [f"The project's own checks run on each step with the tests: {listed}."]


def _mode_notices(rt: Runtime) -> list[str]:
    """What a session without tests says first: how its steps are verified, or that they are not."""
    if rt.options.unverified:
        return [
            "Unverified mode: there is no test command, so no tests run. Every step is "
            f"reviewed as '{UNVERIFIED}' and committed with that note."
        ]
    if rt.options.write_tests:
        return [
            "No tests yet: the first step writes them, test-first (its new test must fail "
            f"before the change and pass after), run with `{rt.options.test_command}`."
        ]
    return []
