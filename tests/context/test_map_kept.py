"""A commit's whole map is kept (context/map_memo.py, issue 47): the next build from that commit,
in this session or the next one, loads it instead of listing the commit's files and looking up
each one, and finds exactly what a build from scratch finds, after any kind of edit too. Real
git repositories and shadows; which git commands ran is read from git's own trace."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.context import build_map, repomap
from tui_engineer.context.git_listing import _status_names
from tui_engineer.context.map_cache import PRUNE_PAST, MapCache, cached_count
from tui_engineer.vcs.shadow import Shadow

pytest.importorskip("tree_sitter_python", reason="the map needs the tree-sitter grammars")

FILES = {
    **{f"pkg/mod{i}.py": f"def f{i}():\n    return {i}\n" for i in range(12)},
    "pkg/big.py": "".join(f"def b{i}():\n    pass\n" for i in range(40)),
    "README.md": "# a project\n",
    "run.sh": "echo run\n",
}


@pytest.fixture
def traced(tmp_path, monkeypatch) -> Path:
    trace = tmp_path / "git-trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    return trace


def _commands(trace: Path) -> list[list[str]]:
    """The git commands run since the last look (the trace is emptied)."""
    if not trace.exists():
        return []
    lines = trace.read_text().splitlines()
    trace.write_text("")
    return [e["argv"][1:] for e in map(json.loads, lines) if e.get("event") == "start"]


def _as_found(built: repomap.RepoMap) -> dict[str, tuple[bool, int, list[str]]]:
    """What a prompt sees of each file: parsed or not, its lines, its symbols' names."""
    return {
        rel: (mapped.parsed, mapped.lines, [s.name for s in mapped.symbols])
        for rel, mapped in built.files.items()
    }


@pytest.fixture
def shadow(make_repo, monkeypatch):
    monkeypatch.setattr(repomap, "MAX_PARSED_BYTES", 200)  # pkg/big.py: listed, never parsed
    repo = make_repo(FILES)
    (repo / "alias.py").symlink_to("pkg/mod1.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "alias")
    made = Shadow.create(repo, session_id="kept")
    yield made
    made.remove()


def test_a_second_build_from_the_commit_lists_nothing_and_finds_the_same(shadow, traced):
    first = build_map(shadow.path, cache_root=shadow.root, committed=shadow.baseline)
    _commands(traced)
    again = build_map(shadow.path, cache_root=shadow.root, committed=shadow.baseline)
    assert _commands(traced) == []  # no ls-tree: the kept map
    assert list(again.files) == list(first.files) == sorted(first.files)
    assert _as_found(again) == _as_found(first)
    assert (again.read, again.reused, again.left) == (0, first.reused + first.read, 0)


@pytest.mark.parametrize(
    "edit",
    ["change", "add", "delete", "rename", "symlink-to-file", "grow-past-bound", "untracked-dir"],
)
def test_a_later_map_from_the_kept_one_is_the_map_from_scratch(shadow, traced, edit):
    """Each later prompt's map: the kept map of the shadow's commit, less what differs from it
    (found from the index, not by looking at every file), is what a build from scratch finds."""
    build_map(shadow.path, cache_root=shadow.root, committed=shadow.baseline)  # kept
    top = shadow.path
    if edit == "change":
        (top / "pkg/mod3.py").write_text("def changed():\n    pass\n")
    elif edit == "add":
        (top / "pkg/new.py").write_text("def new():\n    pass\n")
    elif edit == "delete":
        (top / "pkg/mod4.py").unlink()
    elif edit == "rename":
        (top / "pkg/mod5.py").rename(top / "pkg/moved.py")
    elif edit == "symlink-to-file":
        (top / "alias.py").unlink()
        (top / "alias.py").write_text("def alias():\n    pass\n")
    elif edit == "grow-past-bound":
        (top / "pkg/mod6.py").write_text("".join(f"def g{i}():\n    pass\n" for i in range(30)))
    else:
        (top / "extra/inner").mkdir(parents=True)
        (top / "extra/inner/deep.py").write_text("def deep():\n    pass\n")
    _commands(traced)
    later = build_map(top, cache_root=shadow.root)
    assert not any(argv[:1] == ["ls-tree"] or argv[:1] == ["status"] for argv in _commands(traced))
    scratch = build_map(top, cache_root=top.parent / "elsewhere")  # an empty cache of its own
    assert list(later.files) == list(scratch.files)
    assert _as_found(later) == _as_found(scratch)
    status = subprocess.run(
        ["git", "status", "--porcelain", "-z", "--untracked-files=all"],
        cwd=top, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert sorted(later.uncommitted or []) == sorted(_status_names(status)) != []


def test_a_kept_map_naming_entries_a_save_pruned_is_not_used(make_repo, monkeypatch):
    """Once the cache holds more than its bound, the least recently used entries go, and with
    them every kept map (one may name them): the next build lists the commit again."""
    repo = make_repo({f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(4)})
    head = git(repo, "rev-parse", "HEAD")
    build_map(repo, committed=head)  # parsed and kept
    cache = repomap.cache_file(repo)
    for round_ in range(PRUNE_PAST + 1):  # other contents, each a save of four new entries
        for i in range(4):
            (repo / f"m{i}.py").write_text(f"def v{round_}_{i}():\n    pass\n")
        build_map(repo)
    assert cached_count(cache) <= PRUNE_PAST * 4 + 4
    git(repo, "checkout", "-q", "--", ".")
    again = build_map(repo, committed=head)
    assert again.read == 4  # listed and read anew: the kept map went with the pruned entries
    assert [s.name for s in again.files["m2.py"].symbols] == ["f2"]


def test_the_next_commits_map_is_the_last_kept_one_moved_by_gits_diff(make_repo, traced):
    """The next session, after a step was accepted: its commit has no map kept, the last one
    is moved to it by `git diff-tree` of the two commits (every kind of change), and the map is
    what a build from scratch finds."""
    repo = make_repo(FILES)
    (repo / "alias.py").symlink_to("pkg/mod1.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "alias")
    build_map(repo, committed=git(repo, "rev-parse", "HEAD"))  # kept
    (repo / "pkg/mod3.py").write_text("def changed():\n    pass\n")
    (repo / "pkg/new.py").write_text("def new():\n    pass\n")
    (repo / "pkg/mod4.py").unlink()
    (repo / "pkg/mod5.py").rename(repo / "pkg/moved.py")
    (repo / "alias.py").unlink()
    (repo / "alias.py").write_text("def alias():\n    pass\n")
    (repo / "notes.txt").write_text("not source\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the step")
    head = git(repo, "rev-parse", "HEAD")
    _commands(traced)
    moved = build_map(repo, committed=head)
    assert [argv[0] for argv in _commands(traced)] == ["diff-tree"]  # no ls-tree
    assert moved.read == 3  # mod3, new.py, alias.py; moved.py holds mod5's blob: known
    scratch = build_map(repo, committed=head, cache_root=repo.parent / "elsewhere")
    assert list(moved.files) == list(scratch.files)
    assert _as_found(moved) == _as_found(scratch)
    _commands(traced)
    again = build_map(repo, committed=head)  # and now kept for this commit itself
    assert (again.read, _commands(traced)) == (0, [])


def test_a_map_made_before_another_builds_pruning_save_is_not_kept(make_repo):
    """Build A reads the cache, build B's save then prunes entries A's map names: A's map is
    not kept (a later build from its commit lists the files again)."""
    repo = make_repo({f"m{i}.py": f"def f{i}():\n    pass\n" for i in range(4)})
    head = git(repo, "rev-parse", "HEAD")
    build_map(repo)  # the cache knows the four files
    began = MapCache(repomap.cache_file(repo))  # build A begins
    for round_ in range(PRUNE_PAST + 1):  # build B's saves, the last one pruning
        for i in range(4):
            (repo / f"m{i}.py").write_text(f"def v{round_}_{i}():\n    pass\n")
        build_map(repo)
    began.keep_tree(head, b"a map naming entries gone now")
    assert began.tree(head) is None
    fresh = MapCache(repomap.cache_file(repo))  # a build beginning now may keep its own
    fresh.keep_tree(head, b"kept")
    assert fresh.tree(head) == b"kept"
