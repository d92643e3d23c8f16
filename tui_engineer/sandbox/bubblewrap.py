"""Containment for the local sandbox: the test command runs under bubblewrap (`bwrap`).

Inside, the whole system is read-only, /tmp is private, the user's repository is hidden (only
its git objects, which the shadow reads, and a virtualenv kept inside it show, read-only), and
only the shadow (minus its .git, read-only) and the report folder are writable. The run has its
own PID namespace, so every process it starts (a `setsid` daemon too) ends when it ends, and
`--die-with-parent` ends it if tui-engineer dies. No network unless `allow_network`.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.errors import UserError


class SandboxUnavailable(UserError):
    """The local sandbox cannot contain tests on this machine; the user must choose another."""

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"The local sandbox runs tests under bubblewrap, but {problem}.\n"
            "Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
            "bubblewrap), or run the tests in a container with --sandbox docker, or choose "
            "--sandbox none to run them on this machine without containment (they can then "
            "change any of your files)."
        )


@functools.cache
def bwrap_problem() -> str | None:
    """None when bubblewrap can make a sandbox here, else why not (checked once per process)."""
    program = shutil.which("bwrap")
    if program is None:
        return "bubblewrap (bwrap) is not installed"
    probe = [program, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not start ({err})"
    if done.returncode != 0:
        return f"bwrap cannot create a sandbox here ({done.stderr.strip() or done.returncode})"
    return None


def require_bwrap() -> None:
    problem = bwrap_problem()
    if problem is not None:
        raise SandboxUnavailable(problem)


@dataclass(frozen=True)
class Jail:
    hidden: tuple[Path, ...] = ()  # folders tests must not see (the user's repository)
    shown: tuple[Path, ...] = ()  # folders inside hidden ones shown read-only (git objects, venv)
    allow_network: bool = False
    # Folders of ours outside the shadow the runs write (the affected-tests data, testmon's).
    writable: tuple[Path, ...] = ()

    def wrap(self, command: str, workdir: Path, writable: Sequence[Path] = ()) -> str:
        """A shell command running `command` in `workdir` inside the sandbox."""
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for folder in self.hidden:
            args += ["--tmpfs", str(folder)]
        for folder in self.shown:
            if folder.exists():
                args += ["--ro-bind", str(folder), str(folder)]
        for folder in self.writable:
            folder.mkdir(parents=True, exist_ok=True)
        for folder in (workdir, *self.writable, *writable):
            args += ["--bind", str(folder), str(folder)]
        if (workdir / ".git").exists():  # the shadow's own git state: tests may read, not change
            args += ["--ro-bind", str(workdir / ".git"), str(workdir / ".git")]
        args += ["--unshare-all", *(["--share-net"] if self.allow_network else [])]
        args += ["--die-with-parent", "--new-session", "--chdir", str(workdir)]
        # exec: bwrap's parent is tui-engineer itself, so --die-with-parent follows it.
        return "exec " + shlex.join(["bwrap", *args, "--", "/bin/sh", "-c", command])


def jail_for(
    repo_root: Path,
    git_objects: Path,
    venvs: Sequence[Path],
    *,
    network: bool,
    writable: Sequence[Path] = (),
) -> Jail:
    """The jail for tests of the repository at `repo_root`."""
    root = repo_root.resolve()
    shown = [git_objects.resolve()]
    shown += [v.resolve() for v in venvs if v.resolve().is_relative_to(root)]
    return Jail(hidden=(root,), shown=tuple(shown), allow_network=network, writable=tuple(writable))
