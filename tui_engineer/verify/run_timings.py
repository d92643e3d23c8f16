"""How long a repository's test runs take, kept beside its selection data (`suite.json`): whether
narrowing to the affected tests pays there (verify/selection.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.verify.report import TestReport

# The full suite's time is the quickest of its last runs: one run on a loaded machine does not
# make narrowing look worth it again; a suite grown slower shows within these many runs.
RECENT_FULL_RUNS = 5


@dataclass(frozen=True)
class RunTimings:
    file: Path

    def full_seconds(self) -> float | None:
        """The full suite's time here: the quickest of its last RECENT_FULL_RUNS runs."""
        timings = self._read()
        recent = _seconds(timings.get("full_recent"))
        if recent:
            return min(recent)
        seconds = timings.get("full_seconds")  # a file from before the recent runs were kept
        return float(seconds) if isinstance(seconds, int | float) else None

    def narrowing_costs(self) -> tuple[float, float] | None:
        """(the quickest narrowed run's seconds, the full suite's) when that narrowed run took
        half the full suite or more: its own start-up (pytest-testmon checks every file it
        knows: ~5 s at 40,000 files) then costs a passing step more than it saves a failing
        one. None: narrowing pays, or is not known not to. The full suite's time follows its
        recent runs, so a suite grown slow enough narrows again."""
        narrowed, full = self._read().get("narrowed_seconds"), self.full_seconds()
        if not isinstance(narrowed, int | float) or full is None:
            return None
        return (float(narrowed), full) if narrowed * 2 >= full else None

    def keep(self, scope: str, report: TestReport) -> None:
        """A finished run's time: the full suite's among its recent ones, the quickest narrowed
        run's (the floor of its start-up). A run cut short or unreadable says nothing."""
        if not report.structured or report.timed_out or scope not in ("full", "affected"):
            return
        timings = self._read()
        seconds = round(report.duration, 3)
        if scope == "full":
            recent = [*_seconds(timings.get("full_recent")), seconds][-RECENT_FULL_RUNS:]
            timings["full_recent"] = recent
            timings["full_seconds"] = seconds
        else:
            quickest = timings.get("narrowed_seconds")
            if not isinstance(quickest, int | float) or seconds < quickest:
                timings["narrowed_seconds"] = seconds
        self.file.parent.mkdir(parents=True, exist_ok=True)
        self.file.write_text(json.dumps(timings), encoding="utf-8")

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


def _seconds(value: object) -> list[float]:
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, int | float)]
