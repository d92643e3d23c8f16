"""The git layer (gitpython): the user's repository, the shadow worktree, commits and cleanup.

Named `vcs` so it does not read like gitpython's own top-level `git` module. All functions are
synchronous; the engine runs them in worker threads.
"""

from tui_engineer.vcs.cleanup import cleanup_leftovers
from tui_engineer.vcs.commit import accept, undo_last
from tui_engineer.vcs.dirty import DirtyChoice, DirtyTree, handle_dirty
from tui_engineer.vcs.repo import (
    GitRefused,
    NotARepo,
    RepoState,
    find_repo_root,
    init_repo,
    repo_state,
)
from tui_engineer.vcs.shadow import Shadow

__all__ = [
    "DirtyChoice",
    "DirtyTree",
    "GitRefused",
    "NotARepo",
    "RepoState",
    "Shadow",
    "accept",
    "cleanup_leftovers",
    "find_repo_root",
    "handle_dirty",
    "init_repo",
    "repo_state",
    "undo_last",
]
