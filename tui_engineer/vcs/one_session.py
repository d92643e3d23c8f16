"""One repository, one live session (issue 37 §2): a session that starts while another process
works on the same repository is told so at its start, naming it, rather than running beside it
(every model call made twice, and its accepts refused later as if the user had edited files).

A live session is known by its shadow repository, whose owner lock its process holds for as long
as it works (vcs/owner.py, vcs/cleanup.py): nothing new to write or clean. Sessions of this very
process are not counted (an editor's or a test's sessions, one after another).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.errors import UserError
from tui_engineer.vcs.cleanup import _REASON, _live, _when
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import session_reason, shadow_home


@dataclass(frozen=True)
class LiveSession:
    session_id: str
    pid: int
    started: str  # when, readable


def other_live_session(root: Path) -> LiveSession | None:
    """A session another process runs on this repository now, or None."""
    with open_repo(root) as repo:
        home = shadow_home(repo)
    if not home.is_dir():
        return None
    for folder in sorted(p for p in home.iterdir() if p.is_dir()):
        match = _REASON.match(session_reason(folder) or "")
        if match is None or int(match["pid"]) == os.getpid():
            continue
        if _live(folder, match):
            return LiveSession(match["session"], int(match["pid"]), _when(match["started"]))
    return None


class SessionElsewhere(UserError):
    """Another process's session works on this repository."""


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
        "that one first (its accepted steps stay committed), then start again here."
    )
