"""RepoTree on real git repos: gitignore, lazy folders, marks, selection, live disk changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from rich.style import Style
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tui_engineer.tui.panes.file_tree import IgnoreRules, RepoTree, list_fresh

FILES = {
    ".gitignore": "build/\n*.log\n",
    "calc.py": "def add(a, b):\n    return a + b\n",
    "src/pkg/mod.py": "X = 1\n",
    "src/pkg/.gitignore": "generated.py\n",
    "src/pkg/generated.py": "# made by a tool\n",
    "build/out.txt": "artifact\n",
    "debug.log": "noise\n",
    "tests/test_calc.py": "def test_x():\n    pass\n",
}


class TreeApp(App[None]):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.selected: list[str] = []
        self.changed: list[list[str]] = []

    def compose(self) -> ComposeResult:
        yield RepoTree(self.root, id="tree")

    def on_repo_tree_file_selected(self, event: RepoTree.FileSelected) -> None:
        self.selected.append(event.path)

    def on_repo_tree_files_changed(self, event: RepoTree.FilesChanged) -> None:
        self.changed.append(event.paths)


async def wait_for(pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await pilot.pause(0.02)


async def settled(pilot: Pilot[None], tree: RepoTree) -> None:
    await wait_for(pilot, lambda: tree.loading_count == 0 and "" in tree._loaded)
    await pilot.pause()


@asynccontextmanager
async def tree_on(repo: Path) -> AsyncIterator[tuple[TreeApp, Pilot[None], RepoTree]]:
    """The tree on `repo`, its first listing loaded."""
    app = TreeApp(repo)
    async with app.run_test() as pilot:
        tree = app.query_one(RepoTree)
        await settled(pilot, tree)
        yield app, pilot, tree


def labels(tree: RepoTree) -> dict[str, str]:
    """rel path -> the label a user sees, for every node shown."""
    shown: dict[str, str] = {}

    def walk(node) -> None:  # type: ignore[no-untyped-def]
        for child in node.children:
            shown[child.data.rel] = tree.render_label(child, Style(), Style()).plain
            if child.is_expanded:
                walk(child)

    walk(tree.root)
    return shown


async def test_tree_lists_files_and_hides_gitignored(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    async with tree_on(repo) as (app, pilot, tree):
        top = [child.data.rel for child in tree.root.children]
        assert top == ["src", "tests", ".gitignore", "calc.py"]  # folders first; no .git
        assert "build" not in top and "debug.log" not in top


async def test_expanding_a_folder_lists_it_and_nested_gitignore_applies(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo(FILES)
    async with tree_on(repo) as (app, pilot, tree):
        tree.focus()
        tree.cursor_line = tree.node_for("src").line
        await pilot.press("space")
        await wait_for(pilot, lambda: tree.node_for("src/pkg") is not None)
        tree.cursor_line = tree.node_for("src/pkg").line
        await pilot.press("space")
        await wait_for(pilot, lambda: tree.node_for("src/pkg/mod.py") is not None)
        shown = labels(tree)
        assert "src/pkg/.gitignore" in shown
        assert "src/pkg/generated.py" not in shown  # ignored by the nested .gitignore


async def test_marks_show_change_letters_and_proposal_only_files(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo(FILES)
    async with tree_on(repo) as (app, pilot, tree):
        tree.mark_changes({"calc.py": "M", "new_module.py": "A", "src/pkg/mod.py": "D"})
        await wait_for(pilot, lambda: tree.node_for("new_module.py") is not None)
        shown = labels(tree)
        assert shown["calc.py"].endswith(" M")
        assert shown["new_module.py"].endswith(" A")  # exists only in the proposal
        assert shown["src"].endswith("•")  # a folder holding changes says so
        assert shown["tests"].rstrip().endswith("tests")

        tree.mark_changes({})
        await wait_for(pilot, lambda: tree.node_for("new_module.py") is None)
        assert labels(tree)["calc.py"].endswith("calc.py")


async def test_click_and_enter_post_file_selected(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    async with tree_on(repo) as (app, pilot, tree):
        await pilot.click(RepoTree, offset=(2, tree.node_for("calc.py").line))
        await wait_for(pilot, lambda: app.selected == ["calc.py"])

        tree.cursor_line = tree.node_for(".gitignore").line
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.selected == ["calc.py", ".gitignore"])

        tree.cursor_line = tree.node_for("src").line  # a folder expands, it is not "selected"
        await pilot.press("enter")
        await wait_for(pilot, lambda: tree.node_for("src/pkg") is not None)
        assert app.selected == ["calc.py", ".gitignore"]


async def test_disk_changes_post_files_changed_and_refresh_the_tree(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo(FILES)
    async with tree_on(repo) as (app, pilot, tree):
        # The watcher starts in its own thread; keep writing until it has seen a change.
        deadline = time.monotonic() + 10
        attempt = 0
        while not any("calc.py" in paths for paths in app.changed):
            assert time.monotonic() < deadline, f"no FilesChanged; got {app.changed}"
            attempt += 1
            (repo / "debug.log").write_text(f"ignored {attempt}\n")
            (repo / "calc.py").write_text(f"def add(a, b):\n    return a + b + {attempt}\n")
            await asyncio.sleep(0.7)
        seen = {path for paths in app.changed for path in paths}
        assert "debug.log" not in seen and not any(path.startswith(".git/") for path in seen)

        (repo / "fresh.py").write_text("NEW = True\n")
        await wait_for(pilot, lambda: tree.node_for("fresh.py") is not None, timeout=10)
        (repo / "fresh.py").unlink()
        await wait_for(pilot, lambda: tree.node_for("fresh.py") is None, timeout=10)


async def test_a_folder_excluded_after_the_tree_opened_stays_hidden(
    make_repo: Callable[..., Path],
) -> None:
    """A session's run records: the exclude line and the folder arrive after the first listing."""
    from tui_engineer.records.recorder import RUNS_FOLDER, ensure_excluded

    repo = make_repo(FILES)
    (repo / "shown").mkdir()
    (repo / "shown" / "x.txt").write_text("x\n")
    async with tree_on(repo) as (app, pilot, tree):
        await watcher_running(pilot, app, repo)
        assert tree.node_for("shown") is not None
        ensure_excluded(repo)  # what the engine's recorder does at session start
        (repo / RUNS_FOLDER).mkdir(parents=True)
        (repo / RUNS_FOLDER / "run.jsonl").write_text("{}\n")
        with (repo / ".git" / "info" / "exclude").open("a") as exclude:
            exclude.write("shown/\n")  # a folder already on screen goes when it is excluded
        await wait_for(pilot, lambda: tree.node_for("shown") is None, timeout=10)
        await settled(pilot, tree)
        assert tree.node_for(".tui-engineer") is None
        assert not any(p.startswith(".tui-engineer") for ps in app.changed for p in ps)


async def watcher_running(pilot: Pilot[None], app: TreeApp, repo: Path) -> None:
    """The watcher starts in its own process; touch a file until it reports one change."""
    deadline = time.monotonic() + 10
    while not app.changed:
        assert time.monotonic() < deadline, "the watcher never reported a change"
        (repo / "calc.py").write_text(f"def add(a, b):\n    return a + b  # {time.time()}\n")
        await asyncio.sleep(0.5)
    await pilot.pause()


def test_a_listing_uses_an_exclude_line_written_after_the_rules_were_read(
    make_repo: Callable[..., Path],
) -> None:
    """No watcher needed: the records folder can appear before the watcher process is up."""
    repo = make_repo(FILES)
    rules = IgnoreRules(repo)
    assert "calc.py" in [e.rel for e in list_fresh(repo, "", rules)]  # the rules are read
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write("/.tui-engineer/\n")
    (repo / ".tui-engineer" / "runs").mkdir(parents=True)
    shown = [e.rel for e in list_fresh(repo, "", rules)]
    assert ".tui-engineer" not in shown and "calc.py" in shown
