"""Affected tests first, end to end: real sessions on generated repos, real pytest subprocesses
with pytest-testmon (coverage per test, kept in the user cache), the scripted model over HTTP.

The repo has two independent modules: `alpha` (2 tests) and `beta` (3 tests), so a run's counts
say which tests it ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from tests.engine_support import AFFECTED_AT_ONCE, edit, plan_reply, run_headless
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.engine import events as ev
from tui_engineer.verify.related import TEST_FILE_PATHSPECS, is_test_file, related_tests
from tui_engineer.verify.selection import (
    TestRun,
    TestSelection,
    changed_since,
    tree_files,
    tree_fingerprint,
    tree_listing,
)

# The interpreter running this suite has pytest-testmon (the dev extra); plain `python` on PATH
# may be another one.
TEST_CMD = f"{sys.executable} -m pytest -q"

FILES = {
    "alpha.py": "def double(x):\n    return 2 * x\n",
    "beta.py": "def triple(x):\n    return 3 * x\n",
    "tests/test_alpha.py": (
        "from alpha import double\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
        "def test_double_zero():\n    assert double(0) == 0\n"
    ),
    "tests/test_beta.py": (
        "from beta import triple\n\n\ndef test_triple():\n    assert triple(2) == 6\n\n\n"
        "def test_triple_zero():\n    assert triple(0) == 0\n\n\n"
        "def test_triple_neg():\n    assert triple(-1) == -3\n"
    ),
}
# Code changes that keep the tests passing (testmon ignores a change to a comment).
BETA_CHANGE = edit("beta.py", "    return 3 * x\n", "    return x + x + x\n")
ALPHA_CHANGE = edit("alpha.py", "    return 2 * x\n", "    return x + x\n")
ALPHA_BROKEN = edit("alpha.py", "    return 2 * x\n", "    return 2 + x\n")
ALPHA_FIXED = edit("alpha.py", "    return 2 + x\n", "    return x * 2\n")


# Affected tests first, with testmon: this suite takes well under a second, so narrow it anyway
# (the default waits for 3 s).
SELECTING = {"test_command": TEST_CMD, **AFFECTED_AT_ONCE}

pytestmark = pytest.mark.usefixtures("api_key")


def _traced(call: Callable[[], TestRun]) -> tuple[TestRun, int]:
    """What `call` returns, and the peak of the memory it allocated (tracemalloc)."""
    tracemalloc.start()
    try:
        return call(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def differing(old: dict[str, str], new: dict[str, str]) -> set[str]:
    """The paths whose blob differs between two fingerprints: what `changed_since` must find."""
    return {p for p in old.keys() | new.keys() if old.get(p) != new.get(p)}


def runs(seen, step: int) -> list[tuple[str, bool, int]]:
    """(scope, ok, tests that ran) of each test run of `step`."""
    return [
        (f.scope, f.ok, f.passed + f.failed + f.errors)
        for f in seen.of(ev.TestsFinished)
        if f.step == step
    ]


async def session(repo: Path, server: ScriptedServer, *replies: str, **flags: object):
    server.script(*(Reply(text=r) for r in replies))
    flags = {**SELECTING, **flags}
    result, seen = await run_headless(repo, "change things", server.base_url, **flags)
    assert result.exit_code == 0, [e.to_dict() for e in seen.of(ev.ErrorEvent)]
    return seen


async def beta_then_alpha(repo: Path, server: ScriptedServer, **flags: object):
    """The two-step session most tests here share: step 1 changes beta, step 2 alpha (each
    keeping the tests passing), so step 2 has selection data from step 1's run."""
    plan = plan_reply("Touch beta", "Touch alpha")
    return await session(repo, server, plan, BETA_CHANGE, ALPHA_CHANGE, **flags)


@whole_session
async def test_a_change_to_alpha_runs_alphas_tests_first_then_the_full_suite_once(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    seen = await beta_then_alpha(repo, scripted_server)

    # Step 1: no selection data yet, so the whole suite (which collects it).
    assert runs(seen, 1) == [("full", True, 5)]
    # Step 2 changed alpha: its 2 tests first (not beta's 3), then the full suite once.
    assert runs(seen, 2) == [("affected", True, 2), ("full", True, 5)]
    ready = seen.of(ev.ProposalReady)[-1]
    assert [line.split(":")[0] for line in ready.test_runs] == ["affected", "full"]
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["Touch alpha", "Touch beta"]


# A narrowed run that starts slowly, as pytest-testmon's does on a big repository (it checks
# every file it knows): 2 s more than the whole suite of this small project takes.
SLOW_NARROWING = {
    **FILES,
    "conftest.py": (
        "import time\n\n\ndef pytest_configure(config):\n"
        "    if config.getoption('testmon', default=False):\n        time.sleep(2)\n"
    ),
}


@whole_session
async def test_narrowed_runs_that_cost_half_the_suite_or_more_stop_going_first(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(SLOW_NARROWING)
    plan = plan_reply("Touch beta", "Touch alpha", "Touch beta again", "Touch alpha again")
    beta_again = edit("beta.py", "    return x + x + x\n", "    return 3 * x\n")
    alpha_again = edit("alpha.py", "    return x + x\n", "    return 2 * x\n")
    seen = await session(
        repo, scripted_server, plan, BETA_CHANGE, ALPHA_CHANGE, beta_again, alpha_again,
        affected_after_seconds=0.01,
    )  # fmt: skip
    # Steps 1 and 2 learn the suite's time and collect the coverage data; step 3 narrows.
    assert [scope for scope, _, _ in runs(seen, 3)] == ["affected", "full"]
    assert runs(seen, 4) == [("full", True, 5)]  # the narrowed run took 2 s more than it
    (said,) = [n.message for n in seen.of(ev.Notice) if "narrowed run took" in n.message]
    assert said.startswith("Each attempt runs the whole suite")


@whole_session
async def test_a_failure_in_the_affected_tests_is_diagnosed_before_any_full_run(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    plan = plan_reply("Touch beta", "Change alpha")
    diagnosis = "double adds 2 instead of multiplying by 2."
    seen = await session(
        repo, scripted_server, plan, BETA_CHANGE, ALPHA_BROKEN, diagnosis, ALPHA_FIXED
    )

    order = [
        e.scope if isinstance(e, ev.TestsFinished) else "diagnosis"
        for e in seen.events
        if (isinstance(e, ev.TestsFinished) and e.step == 2) or isinstance(e, ev.Diagnosis)
    ]
    # The broken alpha fails its own tests; the diagnosis follows at once, no full run before it.
    assert order[:2] == ["affected", "diagnosis"]
    step2 = runs(seen, 2)
    assert step2[0] == ("affected", False, 2)
    # The fix only touched alpha.py, which the failing test covers: it runs again first.
    assert step2[1] == ("failing", True, 1)
    # The full suite runs exactly once, last, before review.
    assert [r for r in step2 if r[0] == "full"] == [("full", True, 5)]
    assert step2[-1][0] == "full"
    assert "return x * 2" in (repo / "alpha.py").read_text()


@whole_session
async def test_a_file_changed_outside_makes_the_selection_stale_and_the_full_suite_runs(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    await session(repo, scripted_server, plan_reply("Touch beta"), BETA_CHANGE)

    # The user changes beta.py themselves, outside any session.
    (repo / "beta.py").write_text("def triple(x):\n    return x * 3\n")
    git(repo, "commit", "-qam", "beta by hand")
    seen = await session(repo, scripted_server, plan_reply("Touch alpha"), ALPHA_CHANGE)

    assert runs(seen, 1) == [("full", True, 5)]
    notes = [n.message for n in seen.of(ev.Notice)]
    assert any("stale" in n and "beta.py" in n for n in notes), notes

    # That full run refreshed the data: the next session narrows again.
    again = edit("alpha.py", "    return x + x\n", "    return x * 2\n")
    seen = await session(repo, scripted_server, plan_reply("Alpha again"), again)
    assert runs(seen, 1) == [("affected", True, 2), ("full", True, 5)]


@whole_session
async def test_full_tests_always_runs_the_whole_suite_every_time(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    seen = await beta_then_alpha(repo, scripted_server, full_tests_always=True)
    assert runs(seen, 1) == [("full", True, 5)]
    assert runs(seen, 2) == [("full", True, 5)]


@whole_session
async def test_a_quick_suite_is_run_whole_on_every_attempt_by_default(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(FILES)
    seen = await beta_then_alpha(repo, scripted_server, affected_after_seconds=3)
    # Under 3 s for the whole suite: narrowing would only add pytest start-ups.
    assert runs(seen, 1) == [("full", True, 5)]
    assert runs(seen, 2) == [("full", True, 5)]
    assert not [n for n in seen.of(ev.Notice) if "testmon" in n.message]


def test_without_coverage_data_tests_named_like_or_importing_the_change_are_chosen(
    tmp_path: Path,
) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "",
        "pkg/other.py": "",
        "tests/test_calc.py": "",
        "tests/test_uses.py": "from pkg import calc\n",
        "tests/test_dotted.py": "import pkg.calc as c\n",
        "tests/test_other.py": "from pkg.other import x\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    chosen = related_tests(tmp_path, ["pkg/calc.py"], files)
    assert chosen == ["tests/test_calc.py", "tests/test_dotted.py", "tests/test_uses.py"]
    assert related_tests(tmp_path, ["tests/test_other.py"], files) == ["tests/test_other.py"]


def test_a_test_file_edited_between_attempts_is_related_by_what_it_imports_now(
    tmp_path: Path,
) -> None:
    """Test files are read once a session (issue 47): one the model edits is read again, so
    a test that starts or stops importing the change is chosen or left as it is now."""
    uses = tmp_path / "tests" / "test_uses.py"
    uses.parent.mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "calc.py").write_text("")
    files = ["pkg/calc.py", "tests/test_uses.py", "test_dir/helper.py", "tests/calc_test.pyc"]
    uses.write_text("import os\n")
    assert related_tests(tmp_path, ["pkg/calc.py"], files) == []
    uses.write_text('"""Uses it."""\n\nfrom pkg.calc import add\n')
    assert related_tests(tmp_path, ["pkg/calc.py"], files) == ["tests/test_uses.py"]
    uses.write_text("# from pkg.calc import add\n")  # a comment imports nothing
    assert related_tests(tmp_path, ["pkg/calc.py"], files) == []
    uses.write_text("def test_x():\n    from pkg import (os,\n        calc)\n")
    assert related_tests(tmp_path, ["pkg/calc.py"], files) == []  # one line's import only
    uses.write_text("def test_x():\n    from pkg import os, calc\n")
    assert related_tests(tmp_path, ["pkg/calc.py"], files) == ["tests/test_uses.py"]


def test_narrowing_by_name_lists_the_tree_without_holding_its_fingerprint(make_repo) -> None:
    """Issue 47 (memory): the affected run without coverage data needs the tree's names, not
    each file's blob id: the same names (untracked ones too, a deleted one gone), in a share
    of the memory (at 40,000 files the fingerprint was the session's peak)."""
    files = {f"pkg/deep/folder/module_{n}.py": "" for n in range(3000)}
    repo = make_repo({**files, "pkg/calc.py": "", "tests/test_calc.py": "", "gone.py": ""})
    (repo / "new.py").write_text("")
    (repo / "gone.py").unlink()
    assert tree_files(repo) == list(tree_fingerprint(repo))
    assert "new.py" in tree_files(repo) and "gone.py" not in tree_files(repo)
    selection = TestSelection("python -m pytest", repo / ".home", testmon=False)
    run, peak = _traced(lambda: selection.affected_run(repo, ["pkg/calc.py"]))
    assert (run.command, run.scope) == ("python -m pytest tests/test_calc.py", "affected")
    assert peak < 3000 * 250, peak  # the fingerprint's dict and its output: ~500 bytes a file


def test_git_lists_the_same_test_files_the_names_say(make_repo) -> None:
    """The affected run without coverage data asks git for the test files alone (issue 47:
    2,000 names at 40,000 files): the same files as every file's name tells, untracked and
    oddly named ones included, a deleted one gone."""
    names = [
        "test_top.py", "top_test.py", "tests/test_a.py", "tests/deep/er/b_test.py",
        "tests/test_.py", "tests/_test.py", "test_dir/helper.py", "tests/test_x.pyc",
        "tests/testing.py", "tests/atest_x.py", "pkg/test_sp ace.py", "pkg/tést_ü_test.py",
        "tests/test_gone.py", "tests/Test_upper.py", "tests/conftest.py",
    ]  # fmt: skip
    repo = make_repo(dict.fromkeys(names, ""))
    (repo / "tests" / "test_new.py").write_text("")  # untracked
    (repo / "tests" / "test_gone.py").unlink()
    every = tree_files(repo)
    listed = tree_files(repo, *TEST_FILE_PATHSPECS)
    assert listed == [name for name in every if is_test_file(name)]
    assert "tests/test_new.py" in listed and "tests/test_gone.py" not in listed
    assert "test_top.py" in listed and "test_dir/helper.py" not in listed


def test_a_unittest_suites_affected_run_asks_git_for_its_test_files_alone(
    make_repo, tmp_path: Path, monkeypatch
) -> None:
    """unittest's narrowing picks test modules by the same names: git lists those alone, not
    every file of the repository (2,000 names instead of 40,000 at 40,000 files)."""
    files = {f"pkg/mod_{n}.py": f"V = {n}\n" for n in range(50)}
    files |= {"pkg/__init__.py": "", "tests/__init__.py": "", "tests/test_other.py": ""}
    repo = make_repo({**files, "tests/test_mod_3.py": "from pkg import mod_3\n"})
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    selection = TestSelection.for_repo(repo, "python -m unittest")
    assert selection is not None and selection.runner is not None  # unittest's own narrowing
    run = selection.affected_run(repo, ["pkg/mod_3.py"])
    assert (run.command, run.scope) == ("python -m unittest tests.test_mod_3", "affected")
    starts = [json.loads(line) for line in trace.read_text().splitlines()]
    listings = [e["argv"] for e in starts if e.get("event") == "start" and "ls-files" in e["argv"]]
    assert listings and all(argv[-2:] == list(TEST_FILE_PATHSPECS) for argv in listings)


def test_the_selection_data_is_found_stale_without_a_second_fingerprint(
    make_repo, tmp_path: Path
) -> None:
    """Issue 47 (memory): the coverage data's record keeps the tree as git lists it, and
    whether files changed outside since is found by walking that listing beside git's listing
    now (changed, new and gone files, as two fingerprints found them), in git's order by bytes
    even where a name is not UTF-8, not by holding two fingerprints of the tree (~20 MiB at
    40,000 files)."""
    names = ["\U0001f600.py", os.fsdecode(b"\xffz.py"), "\u00e9.py"]  # by bytes: F0, FF, C3
    files = {f"pkg/deep/folder/module_{n}.py": "" for n in range(3000)}
    repo = make_repo({**files, **{name: "" for name in names}, "a.py": "A = 1\n", "b.py": "B\n"})
    listing, before = tree_listing(repo), tree_fingerprint(repo)
    (repo / "a.py").write_text("A = 2\n")
    (repo / "b.py").unlink()
    (repo / "c.py").write_text("")
    (repo / names[1]).write_text("changed\n")
    expected = {"a.py", "b.py", "c.py", names[1]}
    assert changed_since(repo, listing) == expected == differing(before, tree_fingerprint(repo))
    selection = TestSelection("python -m pytest", tmp_path / "home", testmon=True)
    selection.home.mkdir()
    selection._data_file.write_text("")  # testmon's database: only its presence counts here
    selection._record(listing, {names[1]})
    run, peak = _traced(lambda: selection.affected_run(repo, ["c.py"]))
    assert run.scope == "full" and "(a.py, b.py changed outside)" in run.reason
    assert peak < 3000 * 350, peak  # two fingerprints: ~500 bytes a file


@whole_session
@pytest.mark.parametrize("flag", [None, "--full-tests-always"])
def test_the_headless_output_shows_the_affected_run_then_the_full_suite(
    make_repo, scripted_server: ScriptedServer, flag: str | None
) -> None:
    repo = make_repo(FILES)
    scripted_server.script(
        *(
            Reply(text=t)
            for t in (plan_reply("Touch beta", "Touch alpha"), BETA_CHANGE, ALPHA_CHANGE)
        )
    )
    env = {
        **os.environ,
        "OPENAI_API_KEY": "sk-test-secret-key-0123456789",
        "TUI_ENGINEER_AFFECTED_AFTER_SECONDS": "0",
    }
    argv = [
        sys.executable, "-m", "tui_engineer", "run", "change things", "--yes",
        "--base-url", scripted_server.base_url, "--model", "test-model", "--test-cmd", TEST_CMD,
        # Step 2 not prepared during step 1 (it would start before step 1's run has collected
        # the selection data, and so run the plain suite: test_engine_pipeline.py).
        "--no-pipeline", *([flag] if flag else []),
    ]  # fmt: skip
    done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    step2 = done.stdout.split("▶ Step 2")[1]
    if flag:
        assert "affected" not in done.stdout
        assert "✓ tests: 5 passed" in step2
    else:
        assert "✓ affected tests: 2 passed" in step2
        assert "✓ full suite: 5 passed" in step2
        assert step2.index("affected tests") < step2.index("full suite")
