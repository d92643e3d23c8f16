"""The repository map (context/): symbols found by tree-sitter, cached by content hash, ranked
for a request, and large files shown by the regions that matter, not their head."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git, write_files
from tui_engineer.context import (
    build_map,
    frame_regions,
    gather_context,
    region,
    repomap,
    symbol_region,
)
from tui_engineer.context.map_cache import cached_count
from tui_engineer.context.ranking import Focus, rank, recent_changes
from tui_engineer.edits import apply_edits, parse_edits

pytest.importorskip("tree_sitter_python", reason="the map needs the tree-sitter grammars")


def big_module(lines: int, target: str, at: int) -> str:
    """A module of about `lines` lines with function `target` starting near line `at`."""
    out = ['"""A big module, like more-itertools\' more.py."""\n', "import itertools\n", "\n"]
    count = 0
    while len(out) < lines:
        if abs(len(out) - at) < 3 and target not in "".join(out[-10:]):
            out += [
                f"def {target}(iterable, n, fillvalue=None):\n",
                '    """Windows of n items."""\n',
                "    window = []\n",
                "    for item in iterable:\n",
                "        window.append(item)\n",
                "        if len(window) == n:\n",
                "            yield tuple(window)\n",
                "            window.pop(0)\n",
                "\n",
                "\n",
            ]
            continue
        out += [
            f"def step_{count}(iterable):\n",
            f"    return [item + {count} for item in iterable]\n",
            "\n",
            "\n",
        ]
        count += 1
    return "".join(out)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_request_naming_only_a_symbol_ranks_its_defining_file_first(make_repo) -> None:
    repo = make_repo(
        {
            "README.md": "# Tools\nSee src/tools/shapes.py and src/tools/text.py.\n",
            "src/tools/shapes.py": "class Circle:\n    def area(self):\n        return 3.14\n",
            "src/tools/text.py": "def slugify(title):\n    return title.lower()\n",
            "src/tools/checksums.py": "def rolling_checksum(data, window=16):\n    return 0\n",
            "tests/test_text.py": "from tools.text import slugify\n",
        }
    )
    ranked = rank(build_map(repo), Focus("make rolling_checksum accept a memoryview"))
    assert ranked[0].path == "src/tools/checksums.py"
    assert [s.name for s in ranked[0].symbols] == ["rolling_checksum"]
    context = gather_context(repo, "make rolling_checksum accept a memoryview")
    assert context.shown == ["src/tools/checksums.py"]
    assert "def rolling_checksum(data, window=16):" in context.contents


def test_a_file_name_in_the_text_does_not_name_symbols(make_repo) -> None:
    """`tests/test_more.py` names a file, not a `test_more` method somewhere."""
    repo = make_repo(
        {
            "more.py": "def argmax(iterable):\n    return 0\n",
            "tests/test_more.py": "class T:\n    def test_more(self):\n        pass\n",
            "other.py": "class U:\n    def test_more(self):\n        pass\n",
        }
    )
    focus = Focus("make argmax accept a default; verify: tests/test_more.py", ["more.py"])
    ranked = {r.path: r for r in rank(build_map(repo), focus)}
    assert "other.py" not in ranked
    assert ranked["more.py"].score > ranked["tests/test_more.py"].score


def test_a_commit_that_touched_every_file_ranks_only_those_something_else_points_at(
    make_repo,
) -> None:
    """A broad commit gives each of its files too little to outline it in the map: those
    files are not ranked at all (at 40,000 files, one entry each held ~13 MiB per prompt)."""
    files = {f"pkg/m{n}.py": f"def scale_{n}():\n    return {n}\n" for n in range(40)}
    repo = make_repo({"README.md": "calc\n"})
    write_files(repo, {**files, "pkg/core.py": "def add(a, b):\n    return a - b\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "every module")  # not the first commit: that one is left out
    (repo / "pkg/m1.py").write_text("def scale_1():\n    return -1\n")
    git(repo, "commit", "-qam", "one file")
    focus = Focus("make add call scale_7")
    ranked = {r.path: r for r in rank(build_map(repo), focus, recent_changes(repo))}
    assert set(ranked) == {"pkg/m1.py", "pkg/m7.py"}  # changed alone; named (and broad)
    assert ranked["pkg/m7.py"].reasons == ["defines scale_7", "changed recently"]
    assert ranked["pkg/m7.py"].recent == pytest.approx(6.0 / 2 * 10 / 41)
    assert ranked["pkg/m1.py"].recent == pytest.approx(6.0 + 6.0 / 2 * 10 / 41)


def test_a_type_stub_beside_the_module_does_not_dilute_the_definition(make_repo) -> None:
    repo = make_repo(
        {
            "pkg/more.py": "def argmax(iterable, *, key=None):\n    return 0\n",
            "pkg/more.pyi": "def argmax(iterable: object, *, key: object = ...) -> int: ...\n",
        }
    )
    context = gather_context(repo, "make argmax accept a default for empty iterables")
    assert [r.path for r in context.ranked[:2]] == ["pkg/more.py", "pkg/more.pyi"]
    assert context.shown == ["pkg/more.py"]


def test_a_6000_line_file_is_shown_by_the_function_the_request_names(make_repo) -> None:
    text = big_module(6000, "windowed", at=5000)
    repo = make_repo({"more.py": text, "README.md": "# more\n"})
    start = line_of(text, "def windowed(")
    context = gather_context(repo, "windowed should pad the last window with fillvalue")
    assert context.shown == ["more.py"]
    # The function near line 5,000 is there, whole, under a header naming its lines ...
    assert f"more.py lines {start}-{start + 7} of 6" in context.contents
    assert "            window.pop(0)\n" in context.contents
    # ... with the imports from the top, and not the head of the file beyond them.
    assert "import itertools" in context.contents
    assert "def step_40(" not in context.contents
    assert len(context.contents) < 8_000
    # The outline names the neighbours, and how to ask for more.
    assert "SHOW more.py::name" in context.contents
    assert f"{start}-{start + 7}: def windowed(iterable, n, fillvalue=None)" in context.contents


def test_a_file_named_without_a_symbol_is_shown_from_its_top_within_the_budget(
    make_repo,
) -> None:
    text = big_module(6000, "windowed", at=5000)
    repo = make_repo({"more.py": text})
    context = gather_context(repo, "tidy up more.py", budget_chars=20_000)
    assert "more.py lines 1-" in context.contents
    assert "def step_0(" in context.contents and "def windowed(" not in context.contents
    assert len(context.contents) + len(context.listing) < 20_000
    # The outline lists the symbols nearest what is shown, and says how to ask for the others.
    assert "more not listed: ask SHOW more.py::name" in context.contents


def test_a_large_test_file_the_step_names_is_shown_where_it_tests_the_symbol(
    make_repo,
) -> None:
    tests = "import more\n\n\n" + "".join(
        f"def test_step_{i}():\n    assert more.step_{i}([1]) == [{i + 1}]\n\n\n"
        for i in range(1500)
    )
    tests += "def test_windowed_pads():\n    assert list(more.windowed([1], 2)) == []\n"
    repo = make_repo(
        {"more.py": big_module(6000, "windowed", at=5000), "tests/test_more.py": tests}
    )
    context = gather_context(
        repo, "windowed should pad", step_files=["more.py", "tests/test_more.py"]
    )
    assert "def test_windowed_pads():\n" in context.contents
    assert "(mentions windowed, line 6005)" in context.contents
    assert "def test_step_700" not in context.contents


def test_a_traceback_frame_shows_the_function_around_the_failing_line(make_repo) -> None:
    text = big_module(6000, "windowed", at=4000)
    repo = make_repo({"more.py": text, "tests/test_more.py": "def test_w():\n    pass\n"})
    failing = line_of(text, "            window.pop(0)")
    report = (
        "tests/test_more.py::test_w FAILED\n"
        "tests/test_more.py:2: in test_w\n    list(windowed([1], 1))\n"
        f"more.py:{failing}: in windowed\n    window.pop(0)\nE   IndexError: pop from empty list\n"
    )
    code = frame_regions(repo, report, 6_000)
    start = line_of(text, "def windowed(")
    assert code.startswith(f"more.py lines {start}-{start + 7} of")
    assert f"traceback line {failing}, in windowed" in code
    assert "tests/test_more.py lines 1-2" in code  # the test's frame too, after the innermost
    context = gather_context(repo, "fix the failing test", failures=report)
    assert context.ranked[0].path == "more.py"
    assert "            window.pop(0)\n" in context.contents


def test_a_search_block_copied_from_a_region_applies(make_repo) -> None:
    text = big_module(6000, "windowed", at=5000)
    repo = make_repo({"more.py": text})
    shown = symbol_region(repo, "windowed")
    assert shown is not None and shown.path == "more.py"
    copied = "".join(shown.text.splitlines(keepends=True)[2:4])  # two lines, as the model copies
    reply = (
        f"more.py\n```python\n<<<<<<< SEARCH\n{copied}=======\n"
        f"    window = list()\n    for item in iterable:\n>>>>>>> REPLACE\n```\n"
    )
    apply_edits(repo, parse_edits(reply))
    assert "    window = list()\n" in (repo / "more.py").read_text()
    again = region(repo, "more.py", shown.start, shown.end)
    assert again is not None and "window = list()" in again.text


def test_the_second_build_parses_nothing_and_a_change_reparses_one_file(make_repo) -> None:
    files = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(30)}
    repo = make_repo(files)
    first = build_map(repo)
    assert first.parsed == 30 and repomap.cache_file(repo).is_file()
    second = build_map(repo)
    assert second.parsed == 0
    assert [s.name for s in second.files["pkg/mod7.py"].symbols] == ["f7"]
    (repo / "pkg/mod7.py").write_text("def f7(x):\n    return x\n\n\ndef g7():\n    pass\n")
    third = build_map(repo)
    assert third.parsed == 1
    assert [s.name for s in third.files["pkg/mod7.py"].symbols] == ["f7", "g7"]


def test_a_copy_of_the_repository_shares_the_cache_by_content(make_repo, tmp_path) -> None:
    files = {f"mod{i}.py": f"def f{i}():\n    pass\n" for i in range(10)}
    repo = make_repo(files)
    build_map(repo)
    copy = tmp_path / "shadow"
    git(tmp_path, "clone", "-q", str(repo), str(copy))
    (copy / "mod3.py").write_text("def changed():\n    pass\n")
    shadow = build_map(copy, cache_root=repo)  # a session's shadow uses its repo's cache
    assert shadow.parsed == 1  # only the file whose bytes are new
    assert [s.name for s in shadow.files["mod3.py"].symbols] == ["changed"]


def test_a_cold_build_of_many_files_uses_worker_processes(make_repo, monkeypatch) -> None:
    files = {f"mod{i}.py": f"class C{i}:\n    def m(self):\n        pass\n" for i in range(40)}
    repo = make_repo(files)
    monkeypatch.setattr(repomap, "POOL_THRESHOLD", 10)
    monkeypatch.setattr(repomap.os, "cpu_count", lambda: 3)
    built = build_map(repo)
    assert built.parsed == 40
    assert [s.name for s in built.files["mod39.py"].symbols] == ["C39", "C39.m"]


def test_other_languages_are_mapped(make_repo) -> None:
    repo = make_repo(
        {
            "web/app.ts": "export class Cart {\n  total(): number { return 0 }\n}\n"
            "export const price = (n: number) => n * 2\n",
            "srv/main.go": "package main\n\ntype Server struct{}\n\n"
            "func (s *Server) Start() error { return nil }\n",
            "core/lib.rs": "pub struct Pool;\nimpl Pool {\n    pub fn get(&self) {}\n}\n",
            "notes.txt": "no symbols here\n",
        }
    )
    built = build_map(repo)
    names = {path: [s.name for s in entry.symbols] for path, entry in built.files.items()}
    assert names["web/app.ts"] == ["Cart", "Cart.total", "price"]
    assert names["srv/main.go"] == ["Server", "Server.Start"]
    assert names["core/lib.rs"] == ["Pool", "Pool", "Pool.get"]
    assert names["notes.txt"] == []


def test_the_listing_summarizes_a_big_repository_instead_of_stopping_silently(
    make_repo,
) -> None:
    files = {f"pkg{i // 100}/mod{i}.py": f"def f{i}():\n    pass\n" for i in range(900)}
    repo = make_repo({**files, "src/app.py": "def main():\n    pass\n", "Makefile": "all:\n"})
    small = gather_context(repo, "change src/app.py", budget_chars=12_000)
    assert small.listing.splitlines()[0].startswith("src/app.py")
    assert "901 other files, by folder" in small.listing
    assert "pkg8/ (100 files: 100 .py)" in small.listing
    assert "./ (1 files: 1 other)" in small.listing  # the top folder; a name with no suffix
    roomy = gather_context(repo, "change src/app.py", budget_chars=200_000)
    assert "pkg8/mod899.py" in roomy.listing  # every name, when they fit


def test_line_numbers_count_newlines_only(make_repo) -> None:
    """A form feed (page break, common in old Python code) is not a line break."""
    repo = make_repo(
        {"old.py": "import os\n\x0c\ndef first():\n    pass\x0c\n\ndef second():\n    pass\n"}
    )
    shown = symbol_region(repo, "second")
    assert shown is not None and (shown.start, shown.end) == (6, 7)
    assert shown.text == "def second():\n    pass\n"


def test_regions_refuse_paths_outside_the_repository(make_repo, tmp_path: Path) -> None:
    repo = make_repo({"a.py": "x = 1\n"})
    (tmp_path / "secret.py").write_text("KEY = 1\n")
    assert region(repo, "../secret.py", 1, 5) is None
    assert region(repo, "a.py", 1, 99) is not None


def test_a_fresh_checkout_reads_only_the_files_git_does_not_vouch_for(make_repo, tmp_path) -> None:
    files = {f"mod{i}.py": f"def f{i}():\n    pass\n" for i in range(10)}
    repo = make_repo(files)
    assert build_map(repo).read == 10
    copy = tmp_path / "shadow"  # a session's shadow: new stats, the same blobs
    git(tmp_path, "clone", "-q", str(repo), str(copy))
    (copy / "mod3.py").write_text("def changed():\n    pass\n")  # differs from git's index
    (copy / "new.py").write_text("def new():\n    pass\n")  # git has no blob id for it yet
    shadow = build_map(copy, cache_root=repo)
    assert (shadow.read, shadow.parsed, shadow.reused) == (2, 2, 9)
    assert [s.name for s in shadow.files["mod3.py"].symbols] == ["changed"]
    assert [s.name for s in shadow.files["mod4.py"].symbols] == ["f4"]


def test_a_committed_file_too_big_or_gone_is_never_parsed_though_git_vouches_for_the_rest(
    make_repo, monkeypatch
) -> None:
    """A warm build takes git's word that a committed file is as committed (no stat of its
    own): a file over the size bound is still listed unparsed, and one deleted from the tree
    is not listed."""
    monkeypatch.setattr(repomap, "MAX_PARSED_BYTES", 200)
    big = "".join(f"def f{i}():\n    pass\n" for i in range(40))
    repo = make_repo({"big.py": big, "small.py": "def s():\n    pass\n", "gone.py": "x = 1\n"})
    (repo / "gone.py").unlink()
    for built in (build_map(repo), build_map(repo)):
        assert "big.py" in built.files and built.files["big.py"].symbols == []
        assert [s.name for s in built.files["small.py"].symbols] == ["s"]
        assert "gone.py" not in built.files
    assert (built.read, built.reused) == (0, 1)


def test_a_fresh_shadows_first_map_is_listed_from_its_commit(make_repo, tmp_path) -> None:
    """A session's first map, built before anything is edited in its new shadow, lists the
    files from the commit the shadow was made from: the same map as a look at every file, and
    what a test run leaves meanwhile (its caches, its junk) is not the repository's."""
    files = {f"pkg/mod{i}.py": f"def f{i}():\n    pass\n" for i in range(10)}
    repo = make_repo(files)
    (repo / "alias.py").symlink_to("pkg/mod1.py")  # listed, never followed
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "alias")
    build_map(repo)  # the cache a session finds
    shadow = tmp_path / "shadow"
    git(tmp_path, "clone", "-q", str(repo), str(shadow))
    head = git(shadow, "rev-parse", "HEAD").strip()
    looked = build_map(shadow, cache_root=repo)
    (shadow / "left_by_a_test.py").write_text("def junk():\n    pass\n")
    listed = build_map(shadow, cache_root=repo, committed=head)
    assert sorted(listed.files) == sorted(looked.files) and "left_by_a_test.py" not in listed.files
    for path, mapped in looked.files.items():
        assert [s.name for s in listed.files[path].symbols] == [s.name for s in mapped.symbols]
    assert listed.files["alias.py"].symbols == [] and (listed.read, listed.reused) == (0, 10)


def test_a_later_map_lists_the_files_as_they_are_after_every_kind_of_edit(make_repo) -> None:
    """A prompt's own map is HEAD's files with what git status says differs: every file there is
    is listed, nothing deleted or ignored is, and every blob id it vouches for is the file's."""
    repo = make_repo(
        {
            **{f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(6)},
            ".gitignore": "*.log\n",
            "docs/a.md": "a\n",
        }
    )
    build_map(repo)  # the cache knows every committed file
    (repo / "pkg/m0.py").write_text("def changed():\n    pass\n")  # changed, not staged
    (repo / "pkg/m1.py").write_text("def staged():\n    pass\n")
    git(repo, "add", "pkg/m1.py")  # changed and staged
    (repo / "pkg/m2.py").unlink()  # deleted, not staged
    git(repo, "rm", "-q", "pkg/m3.py")  # deleted and staged
    git(repo, "mv", "pkg/m4.py", "pkg/moved.py")  # renamed
    (repo / "docs/a.md").unlink()
    (repo / "docs/a.md").symlink_to("../pkg/m5.py")  # a file become a link
    (repo / "new.py").write_text("def new():\n    pass\n")  # untracked
    (repo / "run.log").write_text("ignored\n")
    built = build_map(repo)
    there = sorted(
        str(p.relative_to(repo)) for p in repo.rglob("*")
        if ".git" not in p.parts and (p.is_file() or p.is_symlink()) and p.suffix != ".log"
    )  # fmt: skip
    assert sorted(built.files) == there
    vouched = {path: m.blob for path, m in built.files.items() if m.blob}
    for path, blob in vouched.items():
        assert blob == repomap.blob_id((repo / path).read_bytes()), path
    assert [s.name for s in built.files["pkg/m0.py"].symbols] == ["changed"]
    assert [s.name for s in built.files["pkg/moved.py"].symbols] == ["f4"]
    assert built.files["docs/a.md"].symbols == [] and "pkg/m2.py" not in built.files


def test_a_second_clone_of_the_repository_reads_no_file_to_map_it(make_repo, tmp_path) -> None:
    """Issue 47: the map's cache is the repository's, not one folder's: a user's second clone
    (of the first one, or of the same remote) maps every file it has in common from it."""
    files = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(20)}
    repo = make_repo(files)
    assert build_map(repo).parsed == 20
    clone = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    (clone / "pkg" / "mod3.py").write_text("def changed():\n    pass\n")
    mapped = build_map(clone)
    assert (mapped.read, mapped.parsed, mapped.reused) == (1, 1, 19)
    assert [s.name for s in mapped.files["pkg/mod4.py"].symbols] == ["f4"]
    # A third clone of the same remote (here: the first's URL as the second's origin has it).
    third = tmp_path / "third"
    git(tmp_path, "clone", "-q", f"file://{repo}", str(third))
    assert build_map(third).parsed == 0
    # An unrelated repository keeps a cache of its own.
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    (other / "pkg").mkdir()
    (other / "pkg" / "mod4.py").write_text("def f4(x):\n    return x + 4\n")
    git(other, "add", "-A")
    git(other, "commit", "-qm", "x")
    assert repomap.cache_file(other) != repomap.cache_file(repo)


def test_a_map_cut_short_by_its_time_bound_reads_what_the_request_names_and_says_so(
    make_repo,
) -> None:
    """Issue 47: a big repository the cache has never seen is not read whole on the way to a
    prompt: the files the request names first, the rest within the bound, and the prompt says
    the map was cut short; the next build goes on from there."""
    files = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(600)}
    repo = make_repo({**files, "pkg/core.py": "def add(a, b):\n    return a - b\n"})
    context = gather_context(repo, "fix add in pkg/core.py", seconds=0.0)
    assert "pkg/core.py" in context.shown
    assert "The map was cut short: 600 source files were not read" in context.listing
    cut = build_map(repo, text="fix add in pkg/core.py", seconds=0.0)
    assert (cut.read, cut.left) == (0, 600)  # core.py was read by the first build: cached
    assert [s.name for s in cut.files["pkg/core.py"].symbols] == ["add"]
    assert cut.files["pkg/mod5.py"].rows == ()  # listed by name, not read
    whole = build_map(repo, seconds=60.0)
    assert (whole.read, whole.left) == (600, 0)
    assert [s.name for s in whole.files["pkg/mod5.py"].symbols] == ["f5"]
    again = gather_context(repo, "fix add in pkg/core.py", seconds=0.0)
    assert "cut short" not in again.listing


def test_the_cache_keeps_symbols_only_and_a_build_that_reads_nothing_new_writes_nothing(
    make_repo, tmp_path
) -> None:
    """Issue 47 (memory, time): which blob each file holds comes from git, so the cache keeps
    no stats per folder (each session maps a shadow of its own: 4 x 42,000 of them were loaded
    by every build), and a build that parsed nothing new does not write it again (17 MB at
    42,000 files)."""
    repo = make_repo({f"mod{i}.py": f"def f{i}():\n    pass\n" for i in range(5)})
    shadow = tmp_path / "shadow"
    git(tmp_path, "clone", "-q", str(repo), str(shadow))
    first = build_map(shadow, cache_root=repo)
    assert first.parsed == 5
    cache = repomap.cache_file(repo)
    assert cached_count(cache) == 5
    written = _written(cache)
    again = build_map(repo)  # another folder, the same blobs: nothing read, nothing written
    assert (again.read, again.reused, again.parsed) == (0, 5, 0)
    assert _written(cache) == written
    (repo / "mod1.py").write_text("def g1():\n    pass\n")  # not committed: git does not vouch
    changed = build_map(repo)
    assert (changed.read, changed.parsed) == (1, 1)
    assert [s.name for s in changed.files["mod1.py"].symbols] == ["g1"]
    assert cached_count(cache) == 6  # the old mod1 kept beside the new


def test_a_broken_cache_file_is_made_again(make_repo) -> None:
    """A cache file that is no database (a disk fault, a copy cut short) costs one build's
    parsing: the build makes it again, and the next one reuses what that one parsed."""
    repo = make_repo({f"mod{i}.py": f"def f{i}():\n    pass\n" for i in range(5)})
    cache = repomap.cache_file(repo)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_bytes(b"not a database" * 512)
    assert build_map(repo).parsed == 5
    again = build_map(repo)
    assert (again.parsed, again.reused) == (0, 5)
    assert [s.name for s in again.files["mod3.py"].symbols] == ["f3"]


def _written(cache: Path) -> list[tuple[int, int]]:
    """When and how much the cache's files (the database and its write-ahead log) were written."""
    files = [cache, cache.with_name(cache.name + "-wal")]
    return [(f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.exists()]


def test_a_warm_prompt_reads_from_the_cache_only_the_symbols_it_looks_at(make_repo) -> None:
    """Issue 47 (memory): the cache is queried, not loaded whole. A warm build holds a blob id
    per file, and a prompt reads the rows of the files it shows or whose rows hold a name it
    looks for: its peak stays well under the size of every file's symbols (loaded whole, they
    were ~20 MiB at 40,000 files, and the file read ~15 MiB more)."""
    import tracemalloc

    body = "".join(
        f"def handler_{{n}}_{k}(request, *, retries=3, timeout=30.0):\n    return {k}\n\n"
        for k in range(30)
    )
    files = {f"pkg/mod{n}.py": body.format(n=n) for n in range(600)}
    repo = make_repo({**files, "pkg/core.py": "def add(a, b):\n    return a - b\n"})
    cold = build_map(repo)
    symbols = sum(len(mapped.packed) for mapped in cold.files.values())
    del cold
    tracemalloc.start()
    try:
        context = gather_context(repo, "fix add in pkg/core.py, which handler_7_3 calls")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert context.shown[:2] == ["pkg/core.py", "pkg/mod7.py"]
    assert "def handler_7_3(request" in context.contents
    assert peak < symbols / 3, (peak, symbols)


def test_a_map_no_longer_waited_for_reads_only_what_git_and_the_request_name(make_repo) -> None:
    """Issue 47: once the baseline's result is in, the first model call does not wait for the
    map (`enough`): the file the request names and the one changed in the tree (a step's own
    edit) are read whatever the bound, the rest left for later."""
    files = {f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(600)}
    repo = make_repo({**files, "pkg/core.py": "def add(a, b):\n    return a - b\n"})
    (repo / "pkg" / "mod7.py").write_text("def seven(x):\n    return 7\n")
    cut = build_map(repo, text="fix add in pkg/core.py", seconds=60.0, enough=lambda: True)
    assert (cut.read, cut.left) == (2, 599)
    assert [s.name for s in cut.files["pkg/mod7.py"].symbols] == ["seven"]
    assert [s.name for s in cut.files["pkg/core.py"].symbols] == ["add"]
    assert cut.files["pkg/mod5.py"].rows == ()
