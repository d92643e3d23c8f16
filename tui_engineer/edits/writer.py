"""Writing a reply's new file contents all-or-nothing: every write is staged as a temp file next to
its target, then all are swapped in (os.replace); if the disk fails half-way, the files already
replaced are restored."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.disk import from_os_error
from tui_engineer.edits.parser import ApplyFailed


@dataclass
class FileState:
    """A path as this reply has left it so far; data None means it does not exist."""

    data: bytes | None
    mode: int | None = None  # permission bits a written file keeps


def write_changes(
    root: Path, files: Mapping[Path, FileState], originals: Mapping[Path, bytes | None]
) -> None:
    """Write every file whose data differs from `originals` (None: delete it), or none of them.
    Raises ApplyFailed if the disk refuses, after undoing what was done."""
    _Writer(root, files, originals).run()


class _Writer:
    """Stage every write as a temp file next to its target, then swap them all in."""

    def __init__(
        self, root: Path, files: Mapping[Path, FileState], originals: Mapping[Path, bytes | None]
    ) -> None:
        self.root, self.files, self.originals = root, files, originals
        self.staged: list[tuple[Path, Path]] = []  # (temp, target)
        self.made_dirs: list[Path] = []
        self.done: list[Path] = []  # targets already replaced or deleted

    def run(self) -> None:
        changes = [(p, f) for p, f in self.files.items() if f.data != self.originals[p]]
        try:
            for path, entry in changes:
                if entry.data is not None:
                    self._stage(path, entry)
        except OSError as err:
            self._discard()
            self._refuse_no_room(err, "Nothing was changed")
            raise ApplyFailed(f"Could not write the edits ({err}). Nothing was changed.") from err
        try:
            for path, entry in changes:
                self._commit(path, entry)
        except OSError as err:
            self._rollback()
            self._refuse_no_room(err, "The files were restored")
            raise ApplyFailed(f"Could not write the edits ({err}); restored the files.") from err

    def _refuse_no_room(self, err: OSError, then: str) -> None:
        """A full or read-only disk is the machine's, not the model's to fix: DiskFull (a
        UserError, never an EditError sent back to the model)."""
        needed = sum(len(f.data or b"") for p, f in self.files.items() if f.data is not None)
        full = from_os_error(
            err,
            f"Writing the model's edits in {self.root} failed",
            f"{then}. Free some space there (or make it writable), then try again.",
            needed=needed,
        )
        if full is not None:
            raise full from err

    def _stage(self, path: Path, entry: FileState) -> None:
        missing = [p for p in path.parents if not p.exists() and p.is_relative_to(self.root)]
        for parent in reversed(missing):
            parent.mkdir()
            self.made_dirs.append(parent)
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tui-engineer-tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        self.staged.append((temp, path))
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(entry.data or b"")
        except OSError as err:  # a full disk: the error names the file (base/disk.py)
            err.filename = err.filename or str(temp)
            raise
        if entry.mode is not None:
            os.chmod(temp, entry.mode)

    def _commit(self, path: Path, entry: FileState) -> None:
        if entry.data is None:
            path.unlink()
        else:
            temp = next(t for t, target in self.staged if target == path)
            os.replace(temp, path)
        self.done.append(path)

    def _discard(self) -> None:
        for temp, _ in self.staged:
            temp.unlink(missing_ok=True)
        for folder in reversed(self.made_dirs):
            try:
                folder.rmdir()
            except OSError:
                pass

    def _rollback(self) -> None:
        for path in self.done:
            before = self.originals[path]
            try:
                if before is None:
                    path.unlink(missing_ok=True)
                else:
                    path.write_bytes(before)
            except OSError:
                pass  # best effort: the disk already refused a write
        self._discard()
