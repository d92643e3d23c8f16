"""Append a session's events to `.tui-engineer/runs/<session-id>.jsonl` in the target repo.

The folder is kept out of git through `.git/info/exclude`, so the user's .gitignore is untouched."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from tui_engineer.base.names import EXACT
from tui_engineer.engine import events as ev

RUNS_FOLDER = ".tui-engineer/runs"
EXCLUDE_LINE = "/.tui-engineer/"
# Streamed tokens and raw test lines are summed up by other events: skip them, keep records small.
_NOT_RECORDED = {ev.TokenStream.type, ev.TestOutput.type}


def runs_dir(root: Path) -> Path:
    return root / RUNS_FOLDER


def _exclude_file(root: Path) -> Path:
    done = subprocess.run(
        ["git", "rev-parse", "--git-path", "info/exclude"],
        cwd=root,
        capture_output=True,
        check=True,
        **EXACT,  # the repository's own folder may have a name that is not UTF-8
    )
    path = Path(done.stdout.strip())
    return path if path.is_absolute() else root / path


def ensure_excluded(root: Path) -> None:
    """Add the records folder to .git/info/exclude once."""
    exclude = _exclude_file(root)
    text = exclude.read_text() if exclude.exists() else ""
    if EXCLUDE_LINE in text.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = "" if not text or text.endswith("\n") else "\n"
    exclude.write_text(f"{text}{prefix}# tui-engineer run records\n{EXCLUDE_LINE}\n")


class Recorder:
    """An event sink that appends JSON lines, with secrets redacted."""

    def __init__(self, root: Path, session_id: str, secrets: Iterable[str | None] = ()) -> None:
        ensure_excluded(root)
        folder = runs_dir(root)
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{session_id}.jsonl"
        self._secrets = [s for s in secrets if s and len(s) >= 4]
        # A lone surrogate anywhere (a file name git gave us with a non-UTF-8 byte) is written
        # as its JSON escape (\udcff): the record stays valid JSON and the run goes on.
        self._file: IO[str] | None = self.path.open(
            "a", encoding="utf-8", errors="backslashreplace"
        )

    def __call__(self, event: ev.Event) -> None:
        if self._file is None or event.type in _NOT_RECORDED:
            return
        line = json.dumps(event.to_dict(), ensure_ascii=False)
        for secret in self._secrets:
            line = line.replace(secret, "[redacted]")
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError as err:  # a full disk: the error names the record (base/disk.py)
            err.filename = err.filename or str(self.path)
            raise

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# The one way a session ends with nothing left to resume: the user said done.
FINISHED = "done"


def resumable(outcome: str) -> bool:
    """Whether a session whose last run ended with `outcome` can be resumed (`--resume`):
    every end but the user saying done (Ctrl-C, quitting, a budget, a failing step, a crash)."""
    return outcome != FINISHED


def read_record(path: Path) -> list[dict[str, object]]:
    """The events of a record; a torn last line (a crash mid-write) is ignored."""
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
