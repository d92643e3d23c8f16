"""The repository tree: gitignore-aware, lazy, live, with the current proposal's changes marked.

Directories are listed only when expanded, and the listing (scandir + .gitignore rules) runs in a
thread, so a 100,000-file repo opens as fast as a tiny one. A watcher thread (watchfiles) reports
files changed on disk, including the user's own edits, and refreshes the folders that are open.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode
from textual.worker import Worker, WorkerState
from watchfiles import Change

from tui_engineer.base.names import readable
from tui_engineer.tui.panes.tree_listing import Entry, IgnoreRules, list_children, list_fresh
from tui_engineer.tui.panes.tree_watch import DiskWatcher, relative, rules_file_dir, wanted_change

# The listing stays importable from here, where the tree's users first found it.
__all__ = ["Entry", "IgnoreRules", "RepoTree", "list_children", "list_fresh"]

CHANGE_KINDS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed"}


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
        self._watcher = DiskWatcher(self.root_path, self._take_batch)
        self.loading_count = 0  # listings in flight; tests and benchmarks wait on it
        self.show_root = False
        self.guide_depth = 3

    # -- life cycle ------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.root.expand()
        self._reload(self.root)
        self._watcher.start()

    def on_unmount(self) -> None:
        self._watcher.stop()

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
        self.run_worker(self._list_into(node), group="repo-tree-list", exit_on_error=False)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # A listing that fails is said by the app (tui/worker_errors.py), never in silence.
        show = getattr(self.app, "show_worker_error", None)
        if event.state == WorkerState.ERROR and show is not None:
            await show(event.worker)

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
                    # A name that is not UTF-8 reads with U+FFFD (entry.rel stays exact), and
                    # as plain text: a file named like "[b]x" is no markup.
                    Text(readable(entry.name)),
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

    def _take_batch(self, changes: list[tuple[Change, str]]) -> None:
        """Ignore-rule files first: the other changes of the batch are judged by the new rules
        (the run records folder is created just after its exclude line is written); called from
        the watcher's thread."""
        root = self.root_path
        rule_dirs = sorted(
            {rel for _, p in changes if (rel := rules_file_dir(root, p)) is not None}
        )
        if rule_dirs:
            self.rules.forget()
            self.post_message(self.IgnoreRulesChanged(rule_dirs))
        paths = sorted(
            {relative(root, p) for c, p in changes if wanted_change(root, self.rules, c, p)}
        )
        if paths:
            self.post_message(self.FilesChanged(paths))

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
