"""Test-first steps: a step the plan marks `test_first` writes its test with the change, and the
engine checks that the test means something. The step's test files run on the old code first
(the step's other changes taken out of the shadow for that run): they must fail there. Then the
whole change runs as usual and must pass. A new test that already passes on the old code does not
test the change: that is sent back to the model as the reason for its next fix.

The step's code files are swapped back to the baseline for the "before" run and restored right
after, whatever happens; tests never write bytecode into the shadow (both sandboxes set
PYTHONDONTWRITEBYTECODE), so no stale cache can leak old code into the "after" run."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tui_engineer.engine.runtime import Runtime
from tui_engineer.vcs.changes import Change
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.verify import TestReport
from tui_engineer.verify.runners import files_command
from tui_engineer.verify.runners import pytest as pytest_runner

_TEST_FOLDERS = {"tests", "test", "testing", "__tests__", "spec"}
_TEST_SUFFIXES = ("_test.py", "_test.go", "_test.rs", "_spec.rb")
_TEST_INFIXES = (".test.", ".spec.")

WROTE_NO_TEST = (
    "this step is test-first but wrote no test: add a test, named and placed as this "
    "repository's tests are (tests/test_*.py, *_test.go, test/*.test.js, a #[test] in Rust), "
    "that fails without the change and passes with it"
)
INLINE_TESTS = (
    "not run (the new tests are in the code's own file, Rust's #[cfg(test)] module: there is "
    "no old code to run them on)"
)
_RUST_TEST = b"#[test]"
ONLY_TESTS = "not run (the step changes only tests: there is no old code to fail on)"
PASSES_ON_OLD_CODE = "the new test passes on the old code: it does not test the change"
DID_NOT_RUN = "the new test did not run on the old code ({summary}): check its name and location"
PYTEST_STOPPED = (
    "pytest did not get to run the new test on the old code ({summary}): it stopped before any "
    "test ran, so that failure says nothing about the new test. Keep what needs the new code "
    "out of conftest.py and module-level setup that every test loads; import it in the test"
)


def is_test_path(path: str) -> bool:
    """A test file by where it is or what it is called (`tests/…`, `test_x.py`, `x_test.go`,
    `x.test.ts`, `conftest.py`): such files are the test half of a test-first step."""
    pure = PurePosixPath(path)
    name = pure.name
    if any(part in _TEST_FOLDERS for part in pure.parts[:-1]):
        return True
    return (
        name == "conftest.py"
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith(_TEST_SUFFIXES)
        or any(infix in name for infix in _TEST_INFIXES)
    )


@dataclass(frozen=True)
class BeforeRun:
    """The step's new tests on the old code. `problem` is empty when they failed, as they must."""

    report: TestReport | None  # None when there was no test to run
    problem: str = ""
    skipped: str = ""  # why it did not run, when that is no problem (ONLY_TESTS)

    def line(self) -> str:
        """For the review: "before the change: 1 failed in 0.1s (expected)"."""
        if self.report is None:
            return f"before the change: {self.problem or self.skipped}"
        said = "expected" if not self.problem else self.problem
        return f"before the change: {self.report.summary()} ({said})"


def split_changes(changes: Sequence[Change]) -> tuple[list[Change], list[Change]]:
    """(test changes, code changes) of a step."""
    tests = [c for c in changes if is_test_path(c.path)]
    return tests, [c for c in changes if not is_test_path(c.path)]


def _baseline_bytes(shadow: Shadow, path: str) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(shadow.path), "cat-file", "blob", f"{shadow.baseline}:{path}"],
        capture_output=True,
        check=True,
    )
    return done.stdout


def _put(root: Path, path: str, data: bytes | None) -> None:
    """Write `data` at `path` (None: remove the file)."""
    target = root / path
    if data is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


Contents = dict[str, bytes | None]  # path → a file's bytes (None: no such file)


def step_and_old(shadow: Shadow, code: Sequence[Change]) -> tuple[Contents, Contents]:
    """The code files as the step has them, and as the baseline had them (runs git: call it
    in a thread). A renamed file is absent at its old path in the step, and there before."""
    now: Contents = {}
    old: Contents = {}
    for change in code:
        file = shadow.path / change.path
        now[change.path] = file.read_bytes() if file.is_file() else None
        old[change.path] = _baseline_bytes(shadow, change.path) if change.status in "MD" else None
        if change.status == "R" and change.old_path:
            now[change.old_path] = None
            old[change.old_path] = _baseline_bytes(shadow, change.old_path)
    return now, old


@contextlib.contextmanager
def swapped(root: Path, now: Contents, old: Contents) -> Iterator[None]:
    """`old` written into `root` for the while, `now` put back on exit whatever happens. The
    writes are a few small files: done in place, so no thread can race the restore."""
    try:
        for path, data in old.items():
            _put(root, path, data)
        yield
    finally:
        for path, data in now.items():
            _put(root, path, data)


@contextlib.contextmanager
def old_code(shadow: Shadow, code: Sequence[Change]) -> Iterator[None]:
    """The shadow with the step's code changes taken out (its test changes stay), restored on
    exit."""
    with swapped(shadow.path, *step_and_old(shadow, code)):
        yield


def _adds_inline_tests(shadow: Shadow, code: Sequence[Change]) -> bool:
    """True when a changed Rust file holds more #[test] functions than before (runs git)."""
    rust = [c for c in code if c.path.endswith(".rs") and c.status != "D"]
    if not rust:
        return False
    now, old = step_and_old(shadow, rust)
    return any((now[p] or b"").count(_RUST_TEST) > (old[p] or b"").count(_RUST_TEST) for p in now)


def before_command(test_command: str, tests: Sequence[str], workdir: Path) -> str:
    """Only the new tests when the runner takes test files (pytest, node --test, jest); any
    other runner runs whole."""
    return files_command(test_command, workdir, tests) or test_command


def judge(report: TestReport) -> str:
    """The problem with a "before" run, or "" when the new tests failed as they should."""
    if report.ok:
        return PASSES_ON_OLD_CODE
    ran = report.passed + report.failed + report.errors
    if report.structured and ran == 0 and report.exit_code in (4, 5):
        return DID_NOT_RUN.format(summary=report.summary())
    if _pytest_stopped_first(report):
        return PYTEST_STOPPED.format(summary=report.summary())
    return ""


def _pytest_stopped_first(report: TestReport) -> bool:
    """pytest wrote no report and showed no test's result: it stopped before running any (a
    conftest.py that imports the new code, exit code 4), so the "failure" says nothing about
    the new test. Other runners are not read so: a test that does not compile on the old code
    is how a compiled language's new test fails there. A run stopped by the timeout or killed
    by a signal shows no result either (-q marks a test once it ends): a test that hangs or
    crashes Python on the old code fails there. pytest's own exit codes only."""
    if report.structured or report.exit_code not in (1, 2, 3, 4):
        return False
    if not pytest_runner.is_pytest_command(report.command):
        return False
    return not any(pytest_runner.started(line.strip()) for line in report.output_tail.splitlines())


async def run_before(rt: Runtime, step: int) -> BeforeRun:
    """Run the step's test files on the old code (the shadow's baseline plus those files)."""
    changes = await asyncio.to_thread(rt.shadow.changes)
    tests, code = split_changes(changes)
    present = [c.path for c in tests if c.status != "D" and (rt.workdir / c.path).is_file()]
    if not present:
        if await asyncio.to_thread(_adds_inline_tests, rt.shadow, code):
            return BeforeRun(None, skipped=INLINE_TESTS)
        return BeforeRun(None, WROTE_NO_TEST)
    if not code:
        # Tests of behaviour that is already there: before and after are the same code, so
        # there is nothing to check; the normal run still decides.
        return BeforeRun(None, skipped=ONLY_TESTS)
    command = before_command(rt.options.test_command, present, rt.workdir)
    now, old = await asyncio.to_thread(step_and_old, rt.shadow, code)
    with swapped(rt.workdir, now, old):
        report = await rt.run_tests(step, command=command, scope="before")
    return BeforeRun(report, judge(report))
