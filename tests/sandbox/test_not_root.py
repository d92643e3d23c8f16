"""The sandbox works for a user who is not root. Debian's /root is closed to others (0700), and
the private home shows root's toolchain folders (~root/.nvm, ~root/.pyenv) again where they
exist: asking whether they exist must not fail for everyone else. Before, every step's test
run and `tui-engineer doctor` ended in "internal error ... Permission denied: '/root/.nvm'"
for any user but root (found by .ci/run's README pass, which runs as a plain user).
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

SANDBOXED_ECHO = """
import os, subprocess, sys
from pathlib import Path
from tui_engineer.sandbox.bubblewrap import Jail, private_home
from tui_engineer.sandbox.bwrap_program import require_bwrap
hidden, shown, home = private_home(os.environ)
jail = Jail(hidden=tuple(hidden), shown=tuple(shown), home=home, bwrap=require_bwrap())
work = Path(sys.argv[1])
command = jail.wrap("echo ran inside", work)
done = subprocess.run(command, shell=True, capture_output=True, text=True)
print(done.stdout + done.stderr)
"""


def _as_a_plain_user() -> dict:
    """subprocess arguments running as a user who is not root (ourselves, or `nobody`)."""
    if os.geteuid() != 0:
        return {}
    for folder in [Path(sys.executable).resolve().parent, Path(sys.prefix)]:
        for part in [*folder.parents, folder]:
            if not part.stat().st_mode & 0o001:
                pytest.skip(f"{part} is closed to other users: none of them can run this python")
    return {"user": pwd.getpwnam("nobody").pw_uid, "group": pwd.getpwnam("nobody").pw_gid}


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder another user can reach: pytest's own temporary folders sit in one only its
    user may enter (/tmp/pytest-of-root is 0700)."""
    with tempfile.TemporaryDirectory(prefix="tui-not-root-") as made:
        yield Path(made)


def test_a_user_who_is_not_root_gets_a_sandbox(open_folder: Path) -> None:
    work = open_folder / "work"
    work.mkdir()
    home = open_folder / "home"
    home.mkdir()
    open_folder.chmod(0o777)
    for folder in (work, home):
        folder.chmod(0o777)
    root = str(Path(__file__).resolve().parents[2])
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": root}
    done = subprocess.run(
        [sys.executable, "-c", SANDBOXED_ECHO, str(work)],
        capture_output=True,
        text=True,
        env=env,
        cwd=work,
        timeout=60,
        **_as_a_plain_user(),
    )
    assert done.returncode == 0, done.stderr
    assert "ran inside" in done.stdout
