"""One repository, one live session (issue 37 §2): a session that starts while another process
works on the same repository is told so at its start, naming it, rather than running beside it
(every model call made twice, and its accepts refused later as if the user had edited files).
It may take that session over: the other process is asked to stop the way `kill` stops it
(SIGTERM, the same clean stop as a closed terminal's SIGHUP: its accepted steps stay committed,
its record is kept, and a TUI in a terminal gives that terminal back as it found it), and the
session goes on here from its record (session/start.py).

A live session is known by its shadow repository, whose owner lock its process holds for as long
as it works (vcs/owner.py, vcs/cleanup.py): nothing new to write or clean. Sessions of this very
process are not counted (an editor's or a test's sessions, one after another). Checking and
making a shadow happen under one lock per repository (`starting`), so two sessions started in
the same second cannot both find the repository free.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.base.processes import is_running
from tui_engineer.vcs.cleanup import _REASON, _live, _when
from tui_engineer.vcs.owner import hold, release
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import session_reason, shadow_home
from tui_engineer.vcs.spare_ahead import AHEAD

_POLL = 0.05  # seconds between looks while waiting for a session to end
# Held with flock, so the file stays: not named *.lock, which in .git reads as a lock git or
# a killed process left behind (the crash harness counts those).
START_LOCK = "tui-engineer-start"
_START_WAIT = 30.0  # seconds another session's start (its shadow being made) may take


@dataclass(frozen=True)
class LiveSession:
    session_id: str
    pid: int
    started: str  # when, readable
    host: str = ""

    @property
    def here(self) -> bool:
        """Whether its process runs on this machine (only then can it be asked to stop)."""
        return not self.host or self.host == socket.gethostname()


def other_live_session(root: Path) -> LiveSession | None:
    """A session another process runs on this repository now, or None."""
    return next((s for s in live_sessions(root) if s.pid != os.getpid()), None)


def live_sessions(root: Path) -> list[LiveSession]:
    """Every session working on this repository now (this process's too)."""
    with open_repo(root) as repo:
        home = shadow_home(repo)
    if not home.is_dir():
        return []
    found = []
    for folder in sorted(p for p in home.iterdir() if p.is_dir()):
        match = _REASON.match(session_reason(folder) or "")
        if match is not None and match["session"].startswith(AHEAD):
            continue  # a spare being made (vcs/spare_ahead.py), no session
        if match is not None and _live(folder, match):
            started = _when(match["started"])
            found.append(LiveSession(match["session"], int(match["pid"]), started, match["host"]))
    return found


class SessionElsewhere(UserError):
    """Another process's session works on this repository."""

    def __init__(self, message: str, live: LiveSession) -> None:
        super().__init__(message)
        self.live = live


def refuse_second_session(root: Path) -> None:
    """Raise SessionElsewhere when another process's session works on `root` now."""
    live = other_live_session(root)
    if live is None:
        return
    raise SessionElsewhere(
        f"Another tui-engineer session is working on this repository: session "
        f"{live.session_id}, process {live.pid} on this machine, started {live.started} (in "
        "another terminal, or another tab of `tui-engineer serve`). One repository, one "
        "session: two would each ask the model and commit on the same branch. Finish or quit "
        "that one first (its accepted steps stay committed), then start again here; starting "
        "here offers to take it over.",
        live,
    )


@contextlib.contextmanager
def starting(root: Path) -> Iterator[None]:
    """Held while a session checks that the repository is free and makes its shadow: a second
    session starting at the same moment waits, then finds the first one's shadow."""
    with open_repo(root) as repo:
        common = Path(repo.common_dir).resolve()
    # In the repository's git folder, as the accept lock is: the shadows' folder goes with the
    # last shadow (session/run.py), so it holds nothing else.
    fd = hold(common / START_LOCK, wait=_START_WAIT)
    try:
        yield
    finally:
        release(fd)


def make_shadow_alone(root: Path, session_id: str, include_dirty: bool, spares: int) -> Shadow:
    """Make this session's shadow if no other process's session works on `root`; raise
    SessionElsewhere, naming it, if one does. `spares`: how many its repository keeps."""
    with starting(root):
        refuse_second_session(root)
        return Shadow.create(
            root, session_id=session_id, include_dirty=include_dirty, spares=spares
        )


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Wait for process `pid` to end; whether it did within `timeout` seconds. Its end, not its
    shadow's removal: a session's record is closed last, and the next process may go on with it
    only once nothing writes there any more."""
    deadline = time.monotonic() + timeout
    while is_running(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)
    return True


class TakeOverFailed(UserError):
    """The other session did not stop when asked."""


def take_over(live: LiveSession, timeout: float = 60.0) -> None:
    """Ask `live`'s process to stop (SIGTERM: its clean stop keeps its accepted steps
    committed and its record), and wait until it has."""
    if not live.here:
        raise TakeOverFailed(
            f"Session {live.session_id} runs on {live.host}, not on this machine: it can only "
            "be stopped there."
        )
    with contextlib.suppress(ProcessLookupError):
        os.kill(live.pid, signal.SIGTERM)
    if not wait_for_exit(live.pid, timeout):
        raise TakeOverFailed(
            f"Session {live.session_id} (process {live.pid}) was asked to stop but still runs "
            f"after {timeout:.0f} s: stop it there, then try again here."
        )
