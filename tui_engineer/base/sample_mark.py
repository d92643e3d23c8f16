"""How a sample repo `tui-engineer demo` made (and kept) is known again later: by its own git
identity. Here, not in the demo, so the session's start-up checks can tell one without loading
a front end."""

from __future__ import annotations

import subprocess
from pathlib import Path

SAMPLE_EMAIL = "demo@tui-engineer.invalid"


def is_sample_repo(root: Path) -> bool:
    """Whether `root` is a sample repo of the demo."""
    found = subprocess.run(
        ["git", "config", "--local", "user.email"], cwd=root, capture_output=True, text=True
    )
    return found.stdout.strip() == SAMPLE_EMAIL
