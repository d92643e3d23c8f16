"""A shadow is staged again only when something wrote there (base/staging.py, issue 47): any
process's write is heard, and a proposal listed after it holds it; with nothing written in
between, no `git add -A` runs. Real git repositories and shadows; which git commands ran is
read from git's own trace (GIT_TRACE2_EVENT), not from the code."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tui_engineer.base import staging
from tui_engineer.edits.writer import FileState, write_changes
from tui_engineer.engine.steps.test_writes import bracketed
from tui_engineer.sandbox.bubblewrap import jail_for
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.vcs.partial import save_tree
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.verify.selection import tree_files

pytestmark = pytest.mark.skipif(
    staging._LIBC is None or not sys.platform.startswith("linux"), reason="inotify is Linux's"
)


@pytest.fixture
def traced(tmp_path, monkeypatch) -> Path:
    """Where git writes a line per event of every command it runs from here on."""
    trace = tmp_path / "git-trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    return trace


def _adds(trace: Path) -> list[list[str]]:
    """Each staging since the trace began: [] for a `git add -A` of every file, else the files
    a `git update-index --add --remove` named."""
    if not trace.exists():
        return []
    adds = []
    for line in trace.read_text().splitlines():
        event = json.loads(line)
        argv = event.get("argv", [])
        if event.get("event") != "start":
            continue
        if any(argv[i : i + 2] == ["add", "-A"] for i in range(len(argv) - 1)):
            adds.append([])  # every file: whole-tree stagings take no pathspec
        elif "update-index" in argv and "--add" in argv:
            adds.append(argv[argv.index("--") + 1 :])
    return adds


def _stagings(trace: Path) -> int:
    """How many stagings ran since the trace began."""
    return len(_adds(trace))


_FILES = {"pkg/a.py": "A = 1\n", "pkg/deep/b.py": "B = 2\n", "run.sh": "echo\n"}


def _shadow(make_repo) -> Shadow:
    return Shadow.create(make_repo(_FILES), session_id="s1")


def _elsewhere(shadow: Shadow, script: str) -> None:
    """`script` run by a shell of its own in the shadow: a writer that tells nobody."""
    subprocess.run(["sh", "-c", script], cwd=shadow.path, check=True)


def test_a_listing_with_nothing_written_since_the_last_stages_nothing(make_repo, traced):
    shadow = _shadow(make_repo)
    try:
        (shadow.path / "pkg" / "a.py").write_text("A = 10\n")
        first = shadow.diff()
        before = _stagings(traced)
        assert shadow.diff() == first
        assert shadow.changed_files() == [("M", "pkg/a.py")]
        assert save_tree(shadow) and tree_files(shadow.path)
        assert _stagings(traced) == before
    finally:
        shadow.remove()


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("printf 'A = 3\\n' > pkg/a.py", [("M", "pkg/a.py")]),
        ("mkdir -p new/x/y && printf 'N = 1\\n' > new/x/y/n.py", [("A", "new/x/y/n.py")]),
        ("rm pkg/deep/b.py", [("D", "pkg/deep/b.py")]),
        ("rm -r pkg/deep", [("D", "pkg/deep/b.py")]),
        ("mv pkg/deep pkg/moved", [("R", "pkg/moved/b.py")]),
        ("chmod +x run.sh", [("M", "run.sh")]),
        # Same size, its old modification time put back: only the write itself is heard.
        ("cp -p pkg/a.py /tmp/.t$$ && printf 'A = 7\\n' > pkg/a.py && touch -r /tmp/.t$$ "
         "pkg/a.py && rm /tmp/.t$$", [("M", "pkg/a.py")]),
    ],
    ids=["rewrite", "new-nested-folders", "delete", "delete-folder", "move-folder", "mode",
         "same-size-and-time"],
)  # fmt: skip
def test_a_write_by_any_process_is_in_the_next_listing(make_repo, script, expected):
    shadow = _shadow(make_repo)
    try:
        assert shadow.changed_files() == []  # staged once: nothing written yet
        _elsewhere(shadow, script)
        assert sorted(shadow.changed_files()) == sorted(expected)
    finally:
        shadow.remove()


def test_files_written_are_staged_by_name_and_a_delete_stages_every_file(make_repo, traced):
    """What was heard, if all of it is still there, is what git is asked to add: it looks at
    those files alone, not at every file (issue 47). A delete or a move stages every file."""
    shadow = _shadow(make_repo)
    try:
        _elsewhere(shadow, "printf 'A = 3\\n' > pkg/a.py && mkdir new && printf 1 > new/n.py")
        assert shadow.changed_files() == [("A", "new/n.py"), ("M", "pkg/a.py")]
        assert _adds(traced)[-1] == ["new/n.py", "pkg/a.py"]
        _elsewhere(shadow, "chmod +x run.sh")
        assert "run.sh" in dict((p, s) for s, p in shadow.changed_files())
        assert _adds(traced)[-1] == ["run.sh"]
        # New rules for what git ignores are about every file: a log the tests left is added.
        _elsewhere(shadow, "printf 'x\\n' > .gitignore && printf log > out.log")
        _elsewhere(shadow, "printf '*.log\\n' > .gitignore")
        assert ("A", "out.log") not in shadow.changed_files()
        assert _adds(traced)[-1] == []
        _elsewhere(shadow, "printf 'x\\n' > .gitignore")
        assert ("A", "out.log") in shadow.changed_files() and _adds(traced)[-1] == []
        _elsewhere(shadow, "rm pkg/deep/b.py")
        assert ("D", "pkg/deep/b.py") in shadow.changed_files()
        assert _adds(traced)[-1] == []
        assert save_tree(shadow) != shadow.baseline
    finally:
        shadow.remove()


def test_the_models_edits_written_by_way_of_temporary_files_are_staged_by_name(make_repo, traced):
    """The edits' writer puts each file beside its target under a temporary name, then renames
    it over the target: the temporary name, heard and gone, was never in the index, so the
    staging still names the files (it staged every file: 0.4 s at 200,000 files). A tracked
    file that went, beside them, still stages every file."""
    shadow = _shadow(make_repo)
    try:
        assert shadow.changed_files() == []
        a, new = shadow.path / "pkg" / "a.py", shadow.path / "pkg" / "new.py"
        write_changes(
            shadow.path, {a: FileState(b"A = 5\n"), new: FileState(b"N = 1\n")},
            {a: a.read_bytes(), new: None},
        )  # fmt: skip
        assert shadow.changed_files() == [("M", "pkg/a.py"), ("A", "pkg/new.py")]
        assert _adds(traced)[-1] == ["pkg/a.py", "pkg/new.py"]
        assert not list(shadow.path.rglob("*tui-engineer-tmp"))
        b = shadow.path / "pkg" / "deep" / "b.py"
        write_changes(shadow.path, {a: FileState(b"A = 6\n"), b: FileState(None)},
                      {a: a.read_bytes(), b: b.read_bytes()})  # fmt: skip
        assert ("D", "pkg/deep/b.py") in shadow.changed_files()
        assert _adds(traced)[-1] == []
    finally:
        shadow.remove()


def test_a_file_in_a_folder_made_after_the_last_staging_is_heard_later_too(make_repo):
    """The new folder is watched from the staging that found it on: a later write inside it
    (with nothing else written) is staged too."""
    shadow = _shadow(make_repo)
    try:
        _elsewhere(shadow, "mkdir -p fresh/inner")
        assert shadow.changed_files() == []  # empty folders are nothing to git
        _elsewhere(shadow, "printf 'F = 1\\n' > fresh/inner/f.py")
        assert shadow.changed_files() == [("A", "fresh/inner/f.py")]
        _elsewhere(shadow, "printf 'F = 2\\n' > fresh/inner/f.py")
        assert "F = 2" in shadow.diff()
    finally:
        shadow.remove()


def _ignoring_shadow(make_repo) -> Shadow:
    repo = make_repo({**_FILES, ".gitignore": "__pycache__/\n*.log\n"})
    (repo / "kept.log").write_text("tracked although its pattern is ignored\n")
    git(repo, "add", "-f", "kept.log")
    git(repo, "commit", "-qm", "a tracked log")
    return Shadow.create(repo, session_id="ignoring")


def test_writes_git_ignores_stage_nothing_and_the_rest_is_staged(make_repo, traced):
    """A test run's caches (__pycache__, .pytest_cache with its own .gitignore, logs) are
    heard, but git ignores every one of them: no `git add -A` (git check-ignore says so). A
    tracked file whose name an ignore pattern matches, or any other write, is staged."""
    shadow = _ignoring_shadow(make_repo)
    try:
        before = _stagings(traced)
        _elsewhere(
            shadow,
            "mkdir -p pkg/__pycache__ .pytest_cache && printf x > pkg/__pycache__/a.pyc"
            " && printf '*' > .pytest_cache/.gitignore && printf 1 > .pytest_cache/v"
            " && printf run > new.log && rm new.log && printf 2 > other.log",
        )
        assert shadow.changed_files() == []
        assert _stagings(traced) == before
        _elsewhere(shadow, "printf 'changed\n' > kept.log && printf y > pkg/__pycache__/b.pyc")
        assert shadow.changed_files() == [("M", "kept.log")]
        _elsewhere(shadow, "printf 'A = 2\n' > pkg/a.py && printf 3 > other.log")
        assert shadow.changed_files() == [("M", "kept.log"), ("M", "pkg/a.py")]
        assert _stagings(traced) == before + 2
    finally:
        shadow.remove()


def test_more_writes_than_are_named_are_staged_at_once(make_repo, traced, monkeypatch):
    shadow = _ignoring_shadow(make_repo)
    monkeypatch.setattr(staging, "NAMED_MAX", 3)
    try:
        before = _stagings(traced)
        _elsewhere(shadow, "for i in 1 2 3 4 5; do printf $i > $i.log; done")
        assert shadow.changed_files() == []
        assert _stagings(traced) == before + 1
    finally:
        shadow.remove()


def test_an_index_another_git_command_rewrote_is_staged_again(make_repo, traced):
    shadow = _shadow(make_repo)
    try:
        (shadow.path / "pkg" / "a.py").write_text("A = 10\n")
        assert shadow.changed_files() == [("M", "pkg/a.py")]
        # The index back at the baseline, the files untouched: nothing in the tree was written.
        git(shadow.path, "read-tree", shadow.baseline)
        before = _stagings(traced)
        assert shadow.changed_files() == [("M", "pkg/a.py")]
        assert _stagings(traced) == before + 1
    finally:
        shadow.remove()


def test_a_shadow_with_submodules_is_staged_every_time(make_repo, traced):
    """A commit inside a submodule is written in .git/modules, which is not watched."""
    shadow = _shadow(make_repo)
    try:
        (shadow.path / ".gitmodules").write_text("")
        staging.forget(shadow.path)  # as a new shadow: its first staging decides
        shadow.changed_files()
        before = _stagings(traced)
        shadow.changed_files()
        assert _stagings(traced) == before + 1
    finally:
        shadow.remove()


def test_a_removed_shadows_watch_is_closed(make_repo):
    shadow = _shadow(make_repo)
    shadow.changed_files()
    watch = staging._watches[shadow.path.resolve()]
    assert watch is not None and watch.fd >= 0
    shadow.remove()
    assert watch.fd == -1 and shadow.path.resolve() not in staging._watches
    assert not any(
        os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        for fd in map(int, os.listdir("/proc/self/fd"))
        if fd == watch.fd
    )


def test_a_new_shadows_first_listing_stages_nothing(make_repo, traced):
    """Its checkout left the files and the index as the baseline: nothing to stage until
    something writes there."""
    shadow = _shadow(make_repo)
    made = _stagings(traced)  # the repository's own commit
    try:
        assert shadow.diff() == "" and shadow.changed_files() == []
        assert _stagings(traced) == made
        _elsewhere(shadow, "printf 'A = 5\\n' > pkg/a.py")
        assert shadow.changed_files() == [("M", "pkg/a.py")]
        assert _stagings(traced) == made + 1
    finally:
        shadow.remove()


def test_a_shadow_with_a_submodule_checked_out_is_staged_every_time(make_repo, traced):
    """The submodule's own commits are written in the shadow's .git/modules, never heard."""
    lib = make_repo({"lib.py": "L = 1\n"}, name="lib")
    repo = make_repo({"app.py": "A = 1\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "lib")
    shadow = Shadow.create(repo, session_id="subs")
    made = _stagings(traced)
    try:
        assert (shadow.path / "lib" / "lib.py").read_text() == "L = 1\n"
        shadow.changed_files()
        shadow.changed_files()
        assert _stagings(traced) == made + 2
    finally:
        shadow.remove()


_MAPPED = """
import mmap, sys
with open("pkg/a.py", "r+b") as handle:  # opened for writing and closed before any write
    mapped = mmap.mmap(handle.fileno(), 0)
print("mapped", flush=True)
sys.stdin.readline()
mapped[:5] = b"A = 9"  # through the map: no system call, no event
mapped.flush()
mapped.close()
"""


def test_a_test_run_writing_through_a_memory_map_is_seen_when_it_ends(make_repo):
    """A write through a map makes no event of its own (the file's release does, when the map
    goes): the file is listed as the tests' (not the step's, not missed)."""
    shadow = _shadow(make_repo)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _MAPPED], cwd=shadow.path, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "mapped"
        shadow.tests_starting()  # the close is heard and staged here
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.wait(30) == 0
        shadow.tests_ended()
        assert (shadow.path / "pkg" / "a.py").read_text() == "A = 9\n"
        assert [c.path for c in shadow.written_changes()] == ["pkg/a.py"]
        assert shadow.changed_files() == []  # the tests', not the step's
    finally:
        shadow.remove()


_MAPPED_TO_THE_END = """
import mmap
with open("pkg/a.py", "r+b") as handle:  # closed before the write: its close is heard first
    mapped = mmap.mmap(handle.fileno(), 0)
mapped[:5] = b"A = 7"  # through the map, never unmapped: let go only as the process ends
"""


def _sandboxes(repo: Path) -> dict[str, LocalSandbox]:
    jail = jail_for(repo, repo / ".git" / "objects", [], network=False)
    return {"contained": LocalSandbox(jail=jail), "uncontained": LocalSandbox()}


@pytest.mark.parametrize("kind", ["contained", "uncontained"])
async def test_a_run_that_wrote_nothing_is_staged_after_only_where_a_process_may_outlive_it(
    make_repo, traced, kind
):
    """Under bubblewrap every process of a run ends with it, so no map can still be written
    through: with nothing heard, no `git add -A` runs after the run. Uncontained (or in a
    container that outlives its runs), one does."""
    repo = make_repo(_FILES)
    shadow, sandbox = Shadow.create(repo, session_id="s1"), _sandboxes(repo)[kind]
    try:
        shadow.changed_files()
        before = _stagings(traced)
        async with bracketed(shadow, sandbox):
            report = await sandbox.run_tests(shadow.path, "cat pkg/a.py", timeout=60)
        assert report.exit_code == 0, report.output_tail
        assert _stagings(traced) == before + (0 if kind == "contained" else 1)
        assert shadow.written_changes() == [] and shadow.changed_files() == []
    finally:
        shadow.remove()


async def test_a_contained_run_writing_through_a_map_it_never_unmaps_is_the_tests(
    make_repo, traced
):
    """The map is let go when the run's last process ends, and that is heard: the write is
    listed as the tests' without a staging that heard nothing."""
    repo = make_repo(_FILES)
    shadow, sandbox = Shadow.create(repo, session_id="s1"), _sandboxes(repo)["contained"]
    try:
        (shadow.path / "writer.py").write_text(_MAPPED_TO_THE_END)
        shadow.changed_files()  # the step's own file, staged before the run
        async with bracketed(shadow, sandbox):
            report = await sandbox.run_tests(shadow.path, "python writer.py", timeout=60)
        assert report.exit_code == 0, report.output_tail
        assert (shadow.path / "pkg" / "a.py").read_text() == "A = 7\n"
        assert [c.path for c in shadow.written_changes()] == ["pkg/a.py"]
        assert shadow.changed_files() == [("A", "writer.py")]
    finally:
        shadow.remove()


def test_folders_nested_deeper_than_pythons_recursion_limit_are_watched(make_repo):
    """Here the limit is lowered to 150 frames above this test's own (nesting past the usual
    1,000 would leave a tree Python 3.11's own rmtree cannot delete)."""
    shadow = _shadow(make_repo)
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(len(inspect.stack()) + 150)
        _elsewhere(
            shadow,
            "p=deep; i=0; while [ $i -lt 300 ]; do p=$p/d; i=$((i+1)); done;"
            " mkdir -p $p && printf 'X = 1\\n' > $p/x.py",
        )
        (listed,) = shadow.changed_files()
        assert listed[0] == "A" and listed[1].endswith("/d/x.py")
        _elsewhere(shadow, "f=$(find deep -name x.py) && printf 'X = 2\\n' > $f")
        assert "X = 2" in shadow.diff()
    finally:
        sys.setrecursionlimit(limit)
        shadow.remove()


def test_folders_made_and_removed_at_once_keep_the_watch(make_repo, traced):
    """A test run's temporary folders come and go between two stagings: the watch stays, and
    a listing with nothing written after them stages nothing."""
    shadow = _shadow(make_repo)
    try:
        _elsewhere(shadow, "for i in 1 2 3 4 5; do mkdir -p tmp$i/a/b && rm -r tmp$i; done")
        assert shadow.changed_files() == []
        before = _stagings(traced)
        assert shadow.changed_files() == []
        assert _stagings(traced) == before
    finally:
        shadow.remove()
