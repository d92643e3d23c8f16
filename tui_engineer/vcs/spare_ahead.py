"""A spare made before the first session needs one (issue 47).

The first shadow on a repository is a checkout of every file (3-10 s at 40,000 files); every
later one is made from a spare in a fraction of a second (vcs/spare.py). A front end that waits
for the human's request (the TUI) makes that first spare while they type: a shadow is made under
a name of its own and parked in the pool at once. The session's shadow then waits for it rather
than checking out the same files beside it.

Its shadow's session id starts with `AHEAD`: not a session another process must be told about
(vcs/one_session.py leaves it out). A kill mid-way leaves an unowned shadow, which the next
start's cleanup removes like any other.
"""

from __future__ import annotations

import os
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.vcs import spare
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.shadow_place import shadow_home

AHEAD = "spare-ahead-"
# Below this many files a first checkout takes a fraction of a second: nothing to win ahead.
WORTH_FROM = 5_000


def make_spare(root: Path, pool: int) -> bool:
    """Check out a spare for `root`'s repository when its pool holds none and it has files
    enough for a checkout to take seconds; whether one was made. Anything in the way (a merge
    in progress, a full disk) is left for the session to say: it meets the same."""
    if (root / ".gitmodules").exists():
        return False  # no spares are kept for repositories with submodules
    with open_repo(root) as repo:
        home = shadow_home(repo)
        files = _index_entries(Path(repo.git_dir) / "index")
    if files < WORTH_FROM or spare.slots(spare.pool_for(home)):
        return False
    try:
        shadow = Shadow.create(root, session_id=f"{AHEAD}{os.getpid()}", spares=pool)
    except (UserError, OSError):
        return False
    shadow.remove()  # parked: the pool's first spare
    return True


def _index_entries(index: Path) -> int:
    """How many files git's index lists: its header says (no file of the tree is read)."""
    try:
        with index.open("rb") as file:
            header = file.read(12)
    except OSError:
        return 0
    if len(header) < 12 or header[:4] != b"DIRC":
        return 0
    return int.from_bytes(header[8:12], "big")
