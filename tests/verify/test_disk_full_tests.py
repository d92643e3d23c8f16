"""A test run that fails because the disk it writes to is full (issue 52): the machine's,
said with the folder and the room needed, never sent to the model as a code failure; a
project's own test of ENOSPC handling that fails on a roomy disk is still code. The shadow's
file system is a real small one (tests/disk_support.py); the runs' words are pytest's."""

from __future__ import annotations

import os
from pathlib import Path

from tui_engineer.verify.report import TestReport
from tui_engineer.verify.setup_failures import DISK_FULL, environment_problem

SAID = """    def test_export():
>       Path("out.bin").write_bytes(b"x" * 4_000_000)
E       OSError: [Errno 28] No space left on device
tests/test_export.py:5: OSError
FAILED tests/test_export.py::test_export - OSError: [Errno 28] No space left on device
1 failed, 3 passed in 0.41s"""


def failed_run() -> TestReport:
    return TestReport("python -m pytest", 1, 0.4, False, passed=3, failed=1, output_tail=SAID)


def test_a_run_on_a_full_disk_is_the_machines_with_the_room_named(small_disk: Path) -> None:
    stats = os.statvfs(small_disk)
    (small_disk / "filler").write_bytes(b"\0" * (stats.f_bavail * stats.f_frsize - 8192))
    problem = environment_problem(failed_run(), [], workdir=small_disk)
    assert problem is not None and problem.startswith(DISK_FULL), problem
    assert f"No space left on device in {small_disk}" in problem and "needed" in problem
    assert "[Errno 28]" in problem  # the run's own line, for the human


def test_a_failing_test_of_enospc_handling_on_a_roomy_disk_is_code(tmp_path: Path) -> None:
    assert environment_problem(failed_run(), [], workdir=tmp_path) is None
