"""Which tests to run first: the ones a step's changed files can affect.

For pytest the affected set comes from pytest-testmon (coverage of each test, kept per repository
in the user cache and updated by every run); when testmon is not installed in the environment the
tests run in, from test files named like or importing the changed modules (related.py). cargo,
jest, go, node --test and unittest are narrowed by their own modules (verify/runners/); other
runners run their whole command.

Collecting coverage slows a test run down several times, so only the affected runs (a few tests)
collect it; the full suite before review runs as the plain command. The one exception is a full
run when there is no usable data: the first in a repository, or after a stale one.

The testmon data is trusted only while the tree matches what it saw: after each collecting run we
keep a fingerprint (the git blob id of every file), and then the files the tool wrote since. Before
an affected run, every file that differs from the fingerprint must be one the tool wrote; a file
changed elsewhere (an edit outside the tool, a pull) makes the data stale, and the full suite runs
instead and collects afresh. (testmon compares code checksums itself, so the data stays correct
across the tool's own changes.)"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import re
import shlex
import sqlite3
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import sha1
from pathlib import Path

import platformdirs

from tui_engineer.base.names import EXACT, exact
from tui_engineer.base.safe_git import index_lock, shadow_git_full_env
from tui_engineer.base.staging import stage_all
from tui_engineer.verify import runners
from tui_engineer.verify.related import related_tests
from tui_engineer.verify.report import TestReport
from tui_engineer.verify.run_timings import RunTimings
from tui_engineer.verify.runners import pytest
from tui_engineer.verify.runners.base import Runner

# `-p pytest-testmon` names the entry point: it loads with plugin autoloading off, and is not
# registered twice when autoloading is on. testmon needs pytest's cache plugin, so the cache is
# moved out of the worktree instead of switched off (it would show up in the step's diff).
_TESTMON_PLUGIN = "-p pytest-testmon"
RECORD_FORMAT = 2  # the tree as git lists it (1: a fingerprint per file, in JSON)
_ENTRY = re.compile(rb"[^\0]+")


@dataclass(frozen=True)
class TestRun:
    """A test command to run and why: scope is 'affected', 'failing' or 'full'."""

    __test__ = False  # not a pytest test class

    command: str
    scope: str
    reason: str = ""  # set when a narrowed run was wanted but the full suite runs instead


def selection_home(root: Path) -> Path:
    """The folder holding this repository's selection data (testmon's database, the fingerprint
    of the tree it last saw, pytest's cache). A sandbox must let the test run write here."""
    root = root.resolve()
    key = sha1(str(root).encode()).hexdigest()[:10]
    return platformdirs.user_cache_path("tui-engineer") / "selection" / f"{root.name}-{key}"


def _git(workdir: Path, *args: str) -> str:
    env = shadow_git_full_env()  # workdir is a shadow
    done = subprocess.run(
        ["git", *args], cwd=workdir, capture_output=True, check=True, env=env, **EXACT
    )
    return done.stdout


def tree_fingerprint(workdir: Path) -> dict[str, str]:
    """path → git blob id of every file git sees in `workdir` (ignored files left out). Stages
    everything: only for the shadow, whose index is private to the session."""
    return {exact(path): blob.decode() for path, blob in _staged(tree_listing(workdir))}


def tree_listing(workdir: Path) -> bytes:
    """`tree_fingerprint` as git prints it (`ls-files -s -z`), as the selection data's record
    keeps it: one bytes object in git's order (a dict of 40,000 files held ~9 MiB, this ~4)."""
    env = shadow_git_full_env()  # workdir is a shadow
    with index_lock(workdir):  # the baseline stages this shadow too, from another thread
        stage_all(workdir)
        command = ["git", "ls-files", "-s", "-z"]
        return subprocess.run(command, cwd=workdir, capture_output=True, check=True, env=env).stdout


def _staged(out: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(path, blob id) of each file in `ls-files -s -z` output, one at a time; a conflict's
    stages (adjacent: the index is sorted by path, then stage) once, the last one's blob."""
    path, blob = b"", b""
    for entry in _ENTRY.finditer(out):
        meta, _, name = entry.group().partition(b"\t")
        if path and name != path:
            yield path, blob
        path, blob = name, meta.split()[1]
    if path:
        yield path, blob


def changed_since(workdir: Path, recorded: bytes) -> set[str]:
    """The files whose blob differs between `recorded` (a `tree_listing` of before) and the
    tree now: changed, new and gone, as two fingerprints compared would find them. Both
    listings are in git's order (by the names' bytes), so they are walked side by side, an
    entry of each at a time (the two fingerprints held ~20 MiB at 40,000 files)."""
    old, new = _staged(recorded), _staged(tree_listing(workdir))
    changed: set[str] = set()
    a, b = next(old, None), next(new, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            changed.add(exact(a[0]))  # type: ignore[index]  # a is not None here
            a = next(old, None)
        elif a is None or b[0] < a[0]:
            changed.add(exact(b[0]))
            b = next(new, None)
        else:
            if a[1] != b[1]:
                changed.add(exact(a[0]))
            a, b = next(old, None), next(new, None)
    return changed


def tree_files(workdir: Path, *pathspecs: str) -> list[str]:
    """The paths of `tree_fingerprint`, without their blob ids: what narrowing by name and
    import needs (at 40,000 files the fingerprint held ~17 MiB for a list of names); only
    those `pathspecs` match, when given."""
    with index_lock(workdir):
        stage_all(workdir)
        out = _git(workdir, "ls-files", "-z", "--", *pathspecs)
    return list(dict.fromkeys(filter(None, out.split("\0"))))  # a conflict's stages: once


# pytest's exit codes: 3 internal error (a plugin raised), 4 usage error (an option or plugin it
# could not take), 5 no tests collected.
_PLUMBING_EXITS = (3, 4)
# Exit 4 that is no plumbing: the named tests are gone, or the code broke a conftest.py.
_NOT_PLUMBING = ("file or directory not found", "not found:", "while loading conftest")


def plumbing_failure(run: TestRun, plain: str, report: TestReport) -> str | None:
    """Why a narrowed or collecting run failed as a run rather than in its tests (None: it did
    not): pytest could not load or use the selection plugin, or a collecting run found no test.
    A narrowed run whose named tests are gone is no such failure: the full suite runs next."""
    if run.command == plain or report.timed_out or report.exit_code is None:
        return None
    ran = report.passed + report.failed + report.errors
    lines = [line.strip() for line in report.output_tail.splitlines() if line.strip()]
    text = "\n".join(lines).lower()
    if "error importing plugin" in text or (
        report.exit_code in _PLUMBING_EXITS and not any(m in text for m in _NOT_PLUMBING)
    ):
        return _reason(lines, report)
    if report.exit_code == 5 and ran == 0 and run.scope == "full":
        return "it collected no tests"
    return None


def _reason(lines: list[str], report: TestReport) -> str:
    said = [line for line in lines if line.startswith(("ERROR", "ImportError", "E "))]
    last = (said or lines or [f"exit code {report.exit_code}"])[-1]
    return last.removeprefix("ERROR:").strip()[:200]


@dataclass
class TestSelection:
    """Per-session state of affected-first testing for one repository."""

    __test__ = False

    test_command: str
    home: Path
    testmon: bool | None = None  # None: not known yet whether the test environment has it
    min_full_seconds: float = 3.0  # narrow only once the full suite took at least this long
    touched: set[str] = field(default_factory=set)  # files this session wrote, ever
    # False: never run the suite collecting coverage, the plain one instead (a step prepared in
    # the background, engine/ahead/pipeline.py; a copy of the session's selection sharing
    # `touched`).
    collect: bool = True
    # The running check for testmon (engine/steps/verification.py), shared by copies of this
    # selection.
    probing: asyncio.Future[bool] | None = field(default=None, repr=False, compare=False)
    # Why narrowing was turned off for the session (a selection run failed as a run, not in
    # its tests: see `plumbing_failure`); a list so that copies of this selection share it.
    off: list[str] = field(default_factory=list)

    # Another runner, narrowed by its own module (verify/runners/): cargo, jest, go, node, …
    runner: Runner | None = None

    @classmethod
    def for_repo(cls, root: Path, test_command: str) -> TestSelection | None:
        """None when the command cannot be narrowed (not a plain pytest command, nor one whose
        runner module can narrow it)."""
        if pytest.claims(test_command):
            return cls(test_command, selection_home(root))
        runner = runners.narrowing_runner(test_command, root)
        if runner is None:
            return None
        return cls(test_command, selection_home(root), testmon=False, runner=runner)

    @property
    def _data_file(self) -> Path:
        return self.home / "testmondata"

    @property
    def _print_file(self) -> Path:
        return self.home / "tree-record"

    @property
    def timings(self) -> RunTimings:
        return RunTimings(self.home / "suite.json")

    def worth_narrowing(self) -> bool:
        """True once the full suite was seen taking `min_full_seconds` or more here: below
        that, the extra runs (each a pytest start-up) cost more than narrowing saves. Nor
        while a narrowed run costs half the full suite or more (RunTimings.narrowing_costs)."""
        if self.off:
            return False
        if self.min_full_seconds <= 0:
            return True
        seconds = self.timings.full_seconds()
        if seconds is None or seconds < self.min_full_seconds:
            return False
        return self.timings.narrowing_costs() is None

    def _testmon_command(self, mode: str) -> str:
        self.home.mkdir(parents=True, exist_ok=True)
        data = shlex.quote(str(self._data_file))
        cache = shlex.quote(str(self.home / "pytest-cache"))
        command = f"TESTMON_DATAFILE={data} {self.test_command} {_TESTMON_PLUGIN} {mode}"
        return f"{command} -o cache_dir={cache}"

    def probe_command(self) -> str:
        """Exits 0 only if pytest can load pytest-testmon in the test environment. Not
        `--version`: pytest 9 answers it before loading any plugin, so it exits 0 without one;
        `--help` loads them, and lists testmon's options only when it is really there."""
        return f"{self.test_command} {_TESTMON_PLUGIN} --help | grep -q -e --testmon-noselect"

    def turn_off(self, reason: str) -> bool:
        """No narrowing for the rest of the session; True the first time (say so once)."""
        first = not self.off
        if first:
            self.off.append(reason)
        return first

    def full_run(self, reason: str = "") -> TestRun:
        """The whole suite: the plain command, unless testmon has no usable data yet (`reason`
        says why it is stale, or there is none): then it collects every test's coverage."""
        if self.testmon is True and self.collect and (reason or self._recorded() is None):
            return TestRun(self._testmon_command("--testmon-noselect"), "full", reason)
        return TestRun(self.test_command, "full", reason)

    def plain_full_run(self) -> TestRun:
        """The whole suite as configured, collecting nothing (a quick suite, or no narrowing)."""
        return TestRun(self.test_command, "full")

    def affected_run(self, workdir: Path, changed: Iterable[str]) -> TestRun:
        """The run that goes first, or a full run saying why there is none."""
        changed = set(changed)
        self.touched |= changed
        if self.runner is not None:
            files = functools.partial(tree_files, workdir)  # listed only when asked
            command = self.runner.narrowed(self.test_command, changed, workdir, files)
            return TestRun(command, "affected") if command else self.full_run()
        if self.testmon is not True:
            return self._related_run(workdir, changed)
        recorded = self._recorded()
        if recorded is None:
            return self.full_run()  # the first run here: it collects the data
        listing, since = recorded
        outside = sorted(changed_since(workdir, listing) - since - self.touched)
        if outside:
            shown = ", ".join(outside[:3]) + (" …" if len(outside) > 3 else "")
            return self.full_run(f"the test selection data is stale ({shown} changed outside)")
        return TestRun(self._testmon_command("--testmon"), "affected")

    def _related_run(self, workdir: Path, changed: set[str]) -> TestRun:
        files = functools.partial(tree_files, workdir)
        command = pytest.narrowed(self.test_command, changed, workdir, files)
        return TestRun(command, "affected") if command else self.full_run()

    def failing_run(self, failing: Iterable[str]) -> TestRun | None:
        """Only the tests that failed last time (node ids), `--lf` style."""
        ids = sorted(set(failing))
        if not ids or self.runner is not None:  # ids are pytest's node ids
            return None
        return TestRun(f"{self.test_command} {' '.join(shlex.quote(i) for i in ids)}", "failing")

    def fix_stays_covered(
        self, workdir: Path, failing: Iterable[str], fixed: Iterable[str]
    ) -> bool:
        """True when every file a fix changed is covered by the failing tests (testmon's data:
        lines they ran; without it: the failing test files themselves, or modules they are named
        for or import). Then re-running just those tests first is a meaningful quick check."""
        failing, fixed = sorted(set(failing)), set(fixed)
        if not failing or not fixed or self.runner is not None:
            return False
        test_files = {test_id.split("::", 1)[0] for test_id in failing}
        covered = self._covered_by(failing)
        if covered is not None:
            return fixed <= covered | test_files
        return all(f in test_files or related_tests(workdir, [f], test_files) for f in fixed)

    def _covered_by(self, test_ids: list[str]) -> set[str] | None:
        """Files the tests ran code of, per testmon's database (None: no usable data)."""
        if self.testmon is not True or not self._data_file.exists():
            return None
        marks = ",".join("?" * len(test_ids))
        query = (
            "SELECT DISTINCT f.filename FROM test_execution te "
            "JOIN test_execution_file_fp tf ON tf.test_execution_id = te.id "
            f"JOIN file_fp f ON f.id = tf.fingerprint_id WHERE te.test_name IN ({marks})"
        )
        try:
            uri = f"file:{self._data_file}?mode=ro"
            with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
                rows = db.execute(query, test_ids).fetchall()
        except sqlite3.Error:
            return None  # another testmon version's layout: fall back to names and imports
        return {row[0] for row in rows} or None

    def after_run(self, run: TestRun, report: TestReport, workdir: Path) -> None:
        """Keep the selection data's bookkeeping in step with a finished run."""
        self.timings.keep(run.scope, report)
        if _TESTMON_PLUGIN not in run.command:
            self._remember_touched()
        elif report.structured and not report.timed_out:
            self._record(tree_listing(workdir), set())
        else:
            # A run cut short may have left testmon's data half written: trust it no more.
            self._print_file.unlink(missing_ok=True)

    def _recorded(self) -> tuple[bytes, set[str]] | None:
        """(the tree at the last collecting run, a `tree_listing`; files the tool wrote since),
        if usable (an earlier version's record, a fingerprint per file, is not: the next run
        collects the data again). The file: a line of JSON, then the listing's bytes."""
        if not self._data_file.exists():
            return None
        try:
            head, _, listing = self._print_file.read_bytes().partition(b"\n")
            data = json.loads(head)
            if data.get("format") != RECORD_FORMAT:
                return None
            return listing, set(data["since"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def _remember_touched(self) -> None:
        """After a plain run: what this session wrote joins the record (a later session must
        not take the tool's own accepted changes for changes made outside)."""
        recorded = self._recorded()
        if recorded is not None and not self.touched <= recorded[1]:
            self._record(recorded[0], recorded[1] | self.touched)

    def _record(self, listing: bytes, since: set[str]) -> None:
        # `touched` is kept: a rejected proposal's files go back to the baseline, which then
        # differs from this record in files this session wrote, not in files changed outside.
        head = json.dumps({"format": RECORD_FORMAT, "since": sorted(since)})  # ASCII: no \n
        self._print_file.write_bytes(head.encode() + b"\n" + listing)
        (self.home / "fingerprint.json").unlink(missing_ok=True)  # the first format's record
