"""Watching the repository for the tree: a watchfiles child process and the thread that reads
its batches, plus how a changed path is judged (repo-relative, ignored or not, an ignore file).

Plain Python (no Textual): the tree turns the batches into messages."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from watchfiles import Change

from tui_engineer.tui.panes.tree_listing import IgnoreRules

WATCH_DEBOUNCE_MS = 400  # groups an editor's save (write tmp, rename, chmod) into one message

# watchfiles runs in a child process: its recursive set-up walks the whole repo while holding
# the GIL (about 0.4 s per 100,000 files), which would freeze the UI. The child prints one JSON
# line per debounced batch of [change, path] and exits when its stdin closes or it is terminated.
_WATCHER = """
import json, os, sys, threading
from watchfiles import watch
root, debounce = sys.argv[1], int(sys.argv[2])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
git_dir = os.path.join(root, ".git")
exclude = os.path.join(git_dir, "info", "exclude")
def wanted(change, path):
    if path == exclude:  # ignore rules, e.g. the run records folder added at session start
        return True
    return path != git_dir and not path.startswith(git_dir + os.sep)
for changes in watch(root, watch_filter=wanted,
                     debounce=debounce, step=50, stop_event=stop, rust_timeout=500,
                     raise_interrupt=False):
    print(json.dumps(sorted([int(change), path] for change, path in changes)), flush=True)
"""


class DiskWatcher:
    """Calls `on_batch` from its own thread with each debounced batch of (change, absolute path)."""

    def __init__(self, root: Path, on_batch: Callable[[list[tuple[Change, str]]], None]) -> None:
        self.root = root
        self._on_batch = on_batch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="repo-tree-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._proc is not None:
            self._proc.terminate()

    def _run(self) -> None:
        """Runs in its own thread, reading the watcher process's batches of changed paths."""
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _WATCHER, str(self.root), str(WATCH_DEBOUNCE_MS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError:
            return  # no live updates; the tree still works
        self._proc = proc
        if self._stop.is_set():
            proc.terminate()
        assert proc.stdout is not None
        for line in proc.stdout:
            if not self._stop.is_set():
                self._on_batch([(Change(kind), path) for kind, path in json.loads(line)])
        proc.wait()


def relative(root: Path, path: str) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def rules_file_dir(root: Path, path: str) -> str | None:
    """The folder whose listing a changed ignore file governs ("" = all), else None."""
    rel = relative(root, path)
    if rel == ".git/info/exclude":
        return ""
    if PurePosixPath(rel).name == ".gitignore":
        return rel.rpartition("/")[0]
    return None


def wanted_change(root: Path, rules: IgnoreRules, change: Change, path: str) -> bool:
    rel = relative(root, path)
    if rel.startswith("/") or rel == "." or rel.split("/")[0] == ".git":
        return False
    return not rules.ignored(rel, change != Change.deleted and Path(path).is_dir())
