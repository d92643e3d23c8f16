"""A worker that fails with an error that is not a UserError (a bug of ours) is shown in the chat
and as a notification, with the way out, and the traceback saved (crash.py). Without this, a
worker started with exit_on_error=False failed in silence: issue 24's session showed "ready",
an empty chat and nothing. The app's workers all run with exit_on_error=False and land here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.worker import Worker

from tui_engineer.base.crash import internal_error_message

if TYPE_CHECKING:
    from tui_engineer.tui.panes.chat import ChatPane
    from tui_engineer.tui.panes.status import StatusBar

# What each worker was doing, and what the user can do now that it failed.
_WORKERS = {
    "engine": ("the session", "Type a request to start again, or press q to quit."),
    "startup": ("the start-up checks", "The session cannot start: press q to quit."),
    "undo": ("undo", "Nothing was undone; the session goes on."),
    "tests": ("the test run", "The session goes on: press t to run the tests again."),
    "repo-tree-list": ("listing the Files pane", "The session goes on."),
}
_OTHER = ("a background task", "The session goes on.")
STARTUP_FAILED = "stopped: the start-up failed (internal error)"


async def report_worker_error(
    worker: Worker[object], notify: Callable[..., None], chat: ChatPane, status: StatusBar
) -> None:
    """A worker of the app's that failed: said in a notification and the chat, with the way
    out (the app's `on_worker_state_changed` calls this)."""
    during, way_out = _WORKERS.get(worker.group, _OTHER)
    assert worker.error is not None
    text = f"{internal_error_message(worker.error, during)} {way_out}"
    notify(text, title="Internal error", severity="error", timeout=30)
    if worker.group == "startup":
        status.phase = STARTUP_FAILED
    elif worker.group == "engine":
        status.phase = "stopped: internal error"
    await chat.note(text, error=True)
