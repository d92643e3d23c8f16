"""The container's copy of the shadow worktree: a tar made on the host and unpacked into
/workspace, so nothing in the container can write to the user's files."""

from __future__ import annotations

import io
import os
import shlex
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

WORKSPACE = "/workspace"
# Outside the workspace so a report never looks like part of the project; owned by the test user.
REPORT_DIR = "/tui-engineer"
REPORT_PATH = f"{REPORT_DIR}/report.xml"
JEST_REPORT_PATH = f"{REPORT_DIR}/jest.json"  # jest's JSON report (verify/runners/jest.py)
HOME = "/home/sandbox"
# Not copied: the shadow's .git reads the user's objects through a host path, useless inside.
SKIPPED_NAMES = frozenset({".git"})


def workspace_tar(
    workdir: Path,
    *,
    uid: int,
    gid: int,
    skip: Iterable[str] = (),
    extra: Iterable[tuple[Path, str]] = (),
) -> IO[bytes]:
    """A tar of `workdir`'s contents (symlinks kept as links, special files left out), every entry
    owned by `uid:gid`, plus `extra` (source, path in the workspace: the user's ignored folders).
    Spooled to disk past a few MB so a big repo does not sit in memory."""
    skipped = SKIPPED_NAMES | set(skip)
    spool = tempfile.SpooledTemporaryFile(max_size=8 * 1024 * 1024)
    with tarfile.open(fileobj=spool, mode="w") as tar:
        for entry in sorted(os.listdir(workdir)):
            if entry not in skipped:
                tar.add(workdir / entry, arcname=entry, filter=_owned_by(uid, gid))
        for source, path in extra:
            if source.exists() and not (workdir / path).exists():
                tar.add(source, arcname=path, filter=_owned_by(uid, gid))
    spool.seek(0)
    return spool


def _owned_by(uid: int, gid: int):  # -> Callable[[TarInfo], TarInfo | None]
    def fix(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if not (info.isfile() or info.isdir() or info.issym()):
            return None  # sockets, fifos, devices: nothing a test needs copied
        info.uid, info.gid = uid, gid
        info.uname = info.gname = ""
        return info

    return fix


def single_file_tar(name: str, data: bytes, mode: int = 0o644) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), mode
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def read_single_file(chunks: Iterable[bytes]) -> bytes | None:
    """The first regular file in a tar stream from get_archive, or None."""
    with tarfile.open(fileobj=io.BytesIO(b"".join(chunks)), mode="r") as tar:
        for member in tar:
            if member.isfile():
                handle = tar.extractfile(member)
                return handle.read() if handle else None
    return None


def clear_script(keep: Iterable[str], owner: str) -> str:
    """Shell (run as root) that empties the workspace except the kept top-level entries
    (node_modules, target) and forgets the previous run's report."""
    kept = "|".join(shlex.quote(name) for name in keep) or "''"
    return (
        f"mkdir -p {WORKSPACE} {REPORT_DIR} && cd {WORKSPACE} && "
        "for e in * .[!.]* ..?*; do "
        '[ -e "$e" ] || [ -L "$e" ] || continue; '
        f'case "$e" in {kept}) continue;; esac; '
        'rm -rf -- "$e"; done; '
        f"rm -f {REPORT_PATH} {JEST_REPORT_PATH}; chown {owner} {WORKSPACE} {REPORT_DIR}"
    )


def changed_files_script(marker: str, keep: Iterable[str]) -> str:
    """Shell listing workspace files newer than `marker` (kept folders left out)."""
    prunes = " ".join(f"-path ./{shlex.quote(name)} -prune -o" for name in keep)
    return f"cd {WORKSPACE} && find . {prunes} -type f -newer {marker} -print"
