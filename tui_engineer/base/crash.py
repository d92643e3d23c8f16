"""An error that is not the user's to fix (a bug of ours, such as issue 24's UnicodeDecodeError):
said in one paragraph with the way out, the traceback saved to a file for a bug report. Every
front end uses this, so no error is a traceback on the screen and none passes in silence."""

from __future__ import annotations

import os
import time
import traceback
from pathlib import Path

import platformdirs

from tui_engineer.base.names import readable

INTERNAL_ERROR_EXIT = 70  # EX_SOFTWARE (sysexits.h): distinct from 1 (a step failed) and 2 (setup)


def crash_folder() -> Path:
    return platformdirs.user_cache_path("tui-engineer") / "crashes"


def save_details(err: BaseException) -> Path | None:
    """The traceback of `err` in a new file of `crash_folder()`, or None when it cannot be
    written (a read-only home must not turn one error into two)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = crash_folder() / f"crash-{stamp}-{os.getpid()}.txt"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(readable("".join(traceback.format_exception(err))), encoding="utf-8")
    except OSError:
        return None
    return path


def internal_error_message(err: BaseException, during: str = "the session") -> str:
    """What to tell the user about `err`, with the traceback saved (see `save_details`). A full
    or read-only disk is the machine's state, said as such (base/disk.py), never a bug."""
    from tui_engineer.base.disk import disk_trouble

    if (full := disk_trouble(err)) is not None:
        return str(full)
    path = save_details(err)
    details = f"the details are in {path} ;" if path else "the details could not be saved;"
    return (
        f"internal error in {during}: {type(err).__name__}: {readable(str(err)).rstrip('.')}. "
        "This is a bug in tui-engineer, not a problem with your repository. Your repository "
        "holds only the steps you accepted (each one a commit); the next start cleans up "
        f"anything left behind. {details} please report it with that file."
    )
