"""Whether a process is still running, told apart from a zombie (an ended process whose parent
has not reaped it yet). Here in the base so that a serve tab, which must paint before it
loads GitPython, and the one-session check share it."""

from __future__ import annotations

import os
from pathlib import Path


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is gone, for us
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
