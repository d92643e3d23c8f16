"""What the Tests pane says about a run: which run it is (a narrowed one says so), how it
ended, and its lines with what changes every run (temp paths, timings, addresses) scrubbed
for pictures and snapshot tests."""

from __future__ import annotations

import re

from tui_engineer.engine import events as ev

_DURATION = re.compile(r"\b\d+(\.\d+)?s\b")
_TEMP_PATH = re.compile(r"/\S*/(repo|worktrees?|tui-engineer\S*)\S*")
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def run_label(scope: str, command: str) -> str:
    """What the tests pane says is running: a narrowed run (engine/steps/verification.py) says
    so."""
    if scope == "affected":
        return f"the affected tests ({command})"
    if scope == "failing":
        return f"the tests that failed ({command})"
    if scope == "before":
        return f"the new tests on the old code, where they must fail ({command})"
    return command


def finished_label(event: ev.TestsFinished) -> str:
    if event.scope == "before":  # a test-first step: failing here is the point
        return "before the change: " + (
            "passes, so it does not test it" if event.ok else "failed, as expected"
        )
    # The counts are in the header already: only a narrowed run says which it was, and failures
    # that predate the session are said apart (the run is green without them).
    label = "" if event.scope == "full" else f"{event.scope} tests"
    if event.fixed:
        fixed = "now passes: " + ", ".join(i.rsplit("::", 1)[-1] for i in event.fixed[:3])
        label = f"{label} · {fixed}" if label else fixed
    if event.reached:
        names = ", ".join(i.rsplit("::", 1)[-1] for i in event.reached[:3])
        reached = f"still failing, and your change runs through it: {names}"
        label = f"{label} · {reached}" if label else reached
    if event.old_failing:
        old = f"{len(event.old_failing)} of them failing before this session"
        label = f"{label} · {old}" if label else old
    return label


def scrubbed(line: str) -> str:
    """Snapshot mode: no temp paths or timings in the output (they change every run)."""
    line = _ADDRESS.sub("0x…", _TEMP_PATH.sub("<tmp>", line))
    return _DURATION.sub("0.00s", line)
