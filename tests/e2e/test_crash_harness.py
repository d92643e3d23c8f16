"""A few kills of the crash harness (benchmarks/crash_harness.py runs ≥ 50): real headless
sessions with the demo model, SIGKILLed in the middle of an accept, leave the repository as
before or as committed, no lock, and the next run starts, finishes and leaves it clean."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tui_engineer.sandbox.bwrap_program import check_bwrap

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "crash_harness.py"

pytestmark = pytest.mark.skipif(not check_bwrap().ok, reason="needs a working bubblewrap")


def load_harness():
    spec = importlib.util.spec_from_file_location("crash_harness", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_kills_during_an_accept_leave_no_half_written_step():
    harness = load_harness()
    plan = [
        ("decided", "group"), ("pre-commit", "group"), ("ref-moved", "group"),
        ("accept", "process"),
    ]  # fmt: skip
    outcomes, counts = harness.run(plan, seed=3, quiet=True)
    assert counts["kills"] == 4, outcomes
    assert counts["written_but_uncommitted"] == 0 and counts["kills_leaving_a_lock"] == 0
    assert counts["failures"] == 0, [o.problems for o in outcomes]
    said = [o.recovery for o in outcomes]
    # Killed after the decision, before (or during) the commit: the branch never moved, and
    # the next start makes the commit (a decision is never lost).
    assert "committed now" in said[0] and outcomes[0].state == "before"
    assert "committed now" in said[1]
    assert "its files are now written too" in said[2]  # the branch moved: finished


@pytest.fixture
def small_disk_bytes() -> int:
    return 16 * 1024 * 1024  # the harness leaves most of it taken, 0-300 KB free


def test_sessions_on_a_nearly_full_disk_end_named_and_start_clean_after(small_disk: Path):
    """The disk-full phase: a session with its repository (then its repository and cache) on
    a disk with 28 KB, then 46 KB, free ends finished or with the disk named (folder, room
    needed), never exit 70; nothing half-written or locked; once space is freed,
    `--resume --allow-dirty` finishes clean and keeps nothing as the user's edit."""
    harness = load_harness()
    plan = [(harness.DISK_FULL, "both"), (harness.DISK_FULL, "repo")]
    outcomes, counts = harness.run(plan, seed=2, quiet=True, disk=small_disk)
    full = counts["disk_full"]
    assert full["exit_70"] == 0 and full["failures"] == 0, [o.problems for o in outcomes]
    assert full["stopped_named"] >= 1, [(o.exit, o.said) for o in outcomes]
    assert all("Kept your edits" not in o.recovery for o in outcomes)
