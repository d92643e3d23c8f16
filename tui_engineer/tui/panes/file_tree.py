"""The repository tree: gitignore-aware, lazy, live, with the current proposal's changes marked.

Directories are listed only when expanded, and the listing (scandir + .gitignore rules) runs in a
thread, so a 100,000-file repo opens as fast as a tiny one. A watcher thread (watchfiles) reports
files changed on disk, including the user's own edits, and refreshes the folders that are open.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import ClassVar

import pathspec
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode
from watchfiles import Change

CHANGE_KINDS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed"}
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


@dataclass(frozen=True)
class Entry:
    """One node of the tree. `on_disk` is False for paths that exist only in a proposal."""

    rel: str  # repo-relative posix path; "" is the repo root
    is_dir: bool
    on_disk: bool = True

    @property
    def name(self) -> str:
        return PurePosixPath(self.rel).name


class IgnoreRules:
    """Git's ignore rules from every .gitignore on the way down, plus .git/info/exclude.

    Thread-safe: listings and the watcher consult it from worker threads.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._lock = threading.Lock()
        self._seen: tuple[tuple[int, int] | None, ...] | None = None  # see still_fresh()

    def forget(self) -> None:
        """Drop cached rules (a .gitignore changed)."""
        with self._lock:
            self._specs.clear()

    def still_fresh(self) -> bool:
        """False, with the cache dropped, when the repo-wide ignore files (.git/info/exclude,
        the root .gitignore) changed since last asked. Two stats: cheap enough per listing, and
        it works before the watcher is up (the engine adds its records folder to the exclude
        file just as the tree first lists the root)."""
        stamps = []
        for path in (self.root / ".git" / "info" / "exclude", self.root / ".gitignore"):
            try:
                stat = path.stat()
                stamps.append((stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamps.append(None)
        now = tuple(stamps)
        with self._lock:
            if now == self._seen:
                return True
            self._seen = now
            self._specs.clear()
            return False

    def _spec(self, rel_dir: str) -> pathspec.GitIgnoreSpec | None:
        with self._lock:
            if rel_dir in self._specs:
                return self._specs[rel_dir]
        lines = _read_lines(self.root / rel_dir / ".gitignore")
        if rel_dir == "":
            lines = _read_lines(self.root / ".git" / "info" / "exclude") + lines
        spec = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        with self._lock:
            self._specs[rel_dir] = spec
        return spec

    def ignored_in_parent(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is ignored, assuming its parent folder is not (the deepest rule wins)."""
        parts = rel.split("/")
        if parts[0] == ".git":
            return True
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._spec("/".join(parts[:depth]))
            if spec is None:
                continue
            tail = "/".join(parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(tail).include
            if verdict is not None:
                return verdict
        return False

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` is ignored, itself or through any of its folders."""
        parts = rel.split("/")
        for end in range(1, len(parts)):
            if self.ignored_in_parent("/".join(parts[:end]), True):
                return True
        return self.ignored_in_parent(rel, is_dir)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def list_fresh(
    root: Path, rel_dir: str, rules: IgnoreRules, extra: Iterable[str] = ()
) -> list[Entry]:
    """`list_children` with current rules: listed again if an ignore file changed meanwhile."""
    extra = list(extra)
    rules.still_fresh()
    entries = list_children(root, rel_dir, rules, extra)
    if not rules.still_fresh():
        entries = list_children(root, rel_dir, rules, extra)
    return entries


def list_children(
    root: Path, rel_dir: str, rules: IgnoreRules, extra: Iterable[str] = ()
) -> list[Entry]:
    """The visible entries of one folder, folders first, plus `extra` proposal-only paths.

    `extra` are repo-relative paths (not necessarily on disk) whose ancestors should appear here.
    """
    entries: dict[str, Entry] = {}
    prefix = f"{rel_dir}/" if rel_dir else ""
    try:
        with os.scandir(root / rel_dir) as scan:
            for item in scan:
                # Symlinked folders stay leaves: following them can loop or leave the repo.
                is_dir = item.is_dir(follow_symlinks=False)
                rel = prefix + item.name
                if not rules.ignored_in_parent(rel, is_dir):
                    entries[rel] = Entry(rel, is_dir)
    except OSError:
        pass  # the folder vanished or is unreadable: show what the proposal knows
    for path in extra:
        if not path.startswith(prefix) or path == rel_dir:
            continue
        head, _, rest = path[len(prefix) :].partition("/")
        rel = prefix + head
        if rel not in entries:
            entries[rel] = Entry(rel, is_dir=bool(rest), on_disk=False)
    return sorted(entries.values(), key=lambda e: (not e.is_dir, e.name.lower(), e.name))


class RepoTree(Tree[Entry]):
    """The files of a git repository, as the user would see them in `git status` terms."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "repo-tree--added",
        "repo-tree--modified",
        "repo-tree--deleted",
        "repo-tree--renamed",
        "repo-tree--folder",
        "repo-tree--proposal-only",
    }
    DEFAULT_CSS = """
    RepoTree {
        background: $surface;
        & > .repo-tree--added { color: $success; text-style: bold; }
        & > .repo-tree--modified { color: $warning; text-style: bold; }
        & > .repo-tree--deleted { color: $error; text-style: strike; }
        & > .repo-tree--renamed { color: $accent; text-style: bold; }
        & > .repo-tree--folder { color: $primary; }
        & > .repo-tree--proposal-only { text-style: italic; }
    }
    """

    class FileSelected(Message):
        """The user picked a file (click or enter)."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class FilesChanged(Message):
        """Files changed on disk (debounced), repo-relative; ignored files and .git/ excluded."""

        def __init__(self, paths: list[str]) -> None:
            super().__init__()
            self.paths = paths

    class IgnoreRulesChanged(Message):
        """A .gitignore or .git/info/exclude changed; `folders` are the ones it governs."""

        def __init__(self, folders: list[str]) -> None:
            super().__init__()
            self.folders = folders

    def __init__(self, root: Path, *, id: str | None = None) -> None:
        self.root_path = Path(root).resolve()
        super().__init__(self.root_path.name, Entry("", True), id=id)
        self.rules = IgnoreRules(self.root_path)
        self._marks: dict[str, str] = {}
        self._marked_dirs: set[str] = set()
        self._loaded: dict[str, TreeNode[Entry]] = {}  # folder rel -> node with children listed
        self._pending: set[str] = set()  # folders being listed
        self._stop_watching = threading.Event()
        self._watcher: threading.Thread | None = None
        self._watch_proc: subprocess.Popen[str] | None = None
        self.loading_count = 0  # listings in flight; tests and benchmarks wait on it
        self.show_root = False
        self.guide_depth = 3

    # -- life cycle ------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.root.expand()
        self._reload(self.root)
        self._watcher = threading.Thread(
            target=self._watch_disk, name="repo-tree-watch", daemon=True
        )
        self._watcher.start()

    def on_unmount(self) -> None:
        self._stop_watching.set()
        if self._watch_proc is not None:
            self._watch_proc.terminate()

    # -- public API --------------------------------------------------------------------------

    def mark_changes(self, changes: Mapping[str, str]) -> None:
        """Mark the proposal's files: path -> "A"|"M"|"D"|"R"; `{}` clears every mark."""
        before = set(self._marks)
        self._marks = {path.strip("/"): kind for path, kind in changes.items()}
        self._marked_dirs = {
            "/".join(parts[:end])
            for parts in (path.split("/") for path in self._marks)
            for end in range(1, len(parts))
        }
        # Proposal-only files (added, deleted) must appear or vanish in the open folders.
        touched = before | set(self._marks)
        for rel_dir in self._open_dirs_touching(touched):
            self._reload(self._loaded[rel_dir])
        self._invalidate()

    @property
    def marks(self) -> dict[str, str]:
        return dict(self._marks)

    def node_for(self, rel: str) -> TreeNode[Entry] | None:
        """The node showing `rel`, if its folder is open."""
        parent = self._loaded.get(rel.rpartition("/")[0])
        for child in parent.children if parent else ():
            if child.data is not None and child.data.rel == rel:
                return child
        return None

    # -- loading ---------------------------------------------------------------------------

    def _reload(self, node: TreeNode[Entry]) -> None:
        assert node.data is not None
        self._pending.add(node.data.rel)
        self.loading_count += 1
        self.run_worker(self._list_into(node), group="repo-tree-list")

    async def _list_into(self, node: TreeNode[Entry]) -> None:
        assert node.data is not None
        try:
            entries = await asyncio.to_thread(
                list_fresh, self.root_path, node.data.rel, self.rules, list(self._marks)
            )
            if node.tree is self and (node.is_root or node.parent is not None):
                self._apply_listing(node, entries)
        finally:
            self._pending.discard(node.data.rel)
            self.loading_count -= 1

    def _apply_listing(self, node: TreeNode[Entry], entries: list[Entry]) -> None:
        """Bring `node`'s children in line with `entries`, keeping open folders open."""
        assert node.data is not None
        self._loaded[node.data.rel] = node
        current = {child.data.rel: child for child in node.children if child.data is not None}
        wanted = {entry.rel for entry in entries}
        for rel, child in current.items():
            if rel not in wanted:
                self._forget_subtree(rel)
                child.remove()
        previous: TreeNode[Entry] | None = None
        for entry in entries:
            child = current.get(entry.rel)
            if child is None or child.data != entry:
                if child is not None:
                    self._forget_subtree(entry.rel)
                    child.remove()
                child = node.add(
                    entry.name,
                    entry,
                    after=previous if previous is not None else None,
                    before=None if previous is not None else 0,
                    allow_expand=entry.is_dir,
                )
            previous = child

    def _forget_subtree(self, rel: str) -> None:
        for key in [key for key in self._loaded if key == rel or key.startswith(rel + "/")]:
            del self._loaded[key]

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Entry]) -> None:
        entry = event.node.data
        if entry is None or not entry.is_dir:
            return
        if entry.rel not in self._loaded and entry.rel not in self._pending:
            self._reload(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Entry]) -> None:
        entry = event.node.data
        if entry is not None and not entry.is_dir:
            self.post_message(self.FileSelected(entry.rel))

    def _open_dirs_touching(self, paths: Iterable[str]) -> set[str]:
        # Every ancestor: a new folder (from a proposal or the disk) shows up in an open one.
        parents: set[str] = set()
        for path in paths:
            parts = path.split("/")
            parents.update("/".join(parts[:end]) for end in range(len(parts)))
        return {d for d in parents if d in self._loaded}

    # -- watching the disk ----------------------------------------------------------------

    def _watch_disk(self) -> None:
        """Runs in its own thread, reading the watcher process's batches of changed paths."""
        try:
            proc = subprocess.Popen(
                [sys.executable, "-c", _WATCHER, str(self.root_path), str(WATCH_DEBOUNCE_MS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
        except OSError:
            return  # no live updates; the tree still works
        self._watch_proc = proc
        if self._stop_watching.is_set():
            proc.terminate()
        assert proc.stdout is not None
        for line in proc.stdout:
            if not self._stop_watching.is_set():
                self._take_batch([(Change(kind), path) for kind, path in json.loads(line)])
        proc.wait()

    def _take_batch(self, changes: list[tuple[Change, str]]) -> None:
        """Ignore-rule files first: the other changes of the batch are judged by the new rules
        (the run records folder is created just after its exclude line is written)."""
        rule_dirs = sorted(
            {rel for _, p in changes if (rel := self._rules_file_dir(p)) is not None}
        )
        if rule_dirs:
            self.rules.forget()
            self.post_message(self.IgnoreRulesChanged(rule_dirs))
        paths = sorted({self._relative(p) for c, p in changes if self._wanted_change(c, p)})
        if paths:
            self.post_message(self.FilesChanged(paths))

    def _rules_file_dir(self, path: str) -> str | None:
        """The folder whose listing a changed ignore file governs ("" = all), else None."""
        rel = self._relative(path)
        if rel == ".git/info/exclude":
            return ""
        if PurePosixPath(rel).name == ".gitignore":
            return rel.rpartition("/")[0]
        return None

    def _relative(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.root_path).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def _wanted_change(self, change: Change, path: str) -> bool:
        rel = self._relative(path)
        if rel.startswith("/") or rel == "." or rel.split("/")[0] == ".git":
            return False
        return not self.rules.ignored(rel, change != Change.deleted and Path(path).is_dir())

    def on_repo_tree_ignore_rules_changed(self, event: IgnoreRulesChanged) -> None:
        """Re-list every open folder the changed rules govern: newly ignored entries vanish,
        newly visible ones appear."""
        event.stop()
        for rel_dir in list(self._loaded):
            if any(d == "" or rel_dir == d or rel_dir.startswith(d + "/") for d in event.folders):
                self._reload(self._loaded[rel_dir])

    def on_repo_tree_files_changed(self, event: FilesChanged) -> None:
        """Refresh the open folders that hold changed paths (the message still bubbles)."""
        for rel_dir in self._open_dirs_touching(event.paths):
            self._reload(self._loaded[rel_dir])

    # -- rendering -------------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        # Labels are also measured before mount (width), when component styles do not exist yet.
        try:
            return self.get_component_rich_style(name)
        except KeyError:
            return Style()

    def render_label(self, node: TreeNode[Entry], base_style: Style, style: Style) -> Text:
        text = super().render_label(node, base_style, style)
        entry = node.data
        if entry is None:
            return text
        kind = self._marks.get(entry.rel)
        if kind is not None:
            mark_style = self._style(f"repo-tree--{CHANGE_KINDS.get(kind, 'modified')}")
            text.stylize(mark_style)
            text.append(f" {kind}", style=mark_style + Style(strike=False, bold=True))
        elif entry.is_dir:
            text.stylize(self._style("repo-tree--folder"))
            if entry.rel in self._marked_dirs:
                text.append(" •", style=self._style("repo-tree--modified"))
        if not entry.on_disk:
            text.stylize(self._style("repo-tree--proposal-only"))
        return text
