"""Bench progress events (the terminal bar and the TUI's bench screen render the same ones)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tui_engineer.bench.results import RunResult


@dataclass(frozen=True)
class BenchStarted:
    total: int  # runs in the bench, finished ones included
    done: int  # already finished (a resumed bench)
    worked: int  # of those, how many worked


@dataclass(frozen=True)
class RunFinished:
    result: RunResult
    done: int
    total: int
    worked: int  # runs that worked so far

    @property
    def pass_rate(self) -> float:
        return self.worked / self.done if self.done else 0.0


@dataclass(frozen=True)
class BenchFinished:
    done: int
    total: int
    worked: int


BenchEvent = BenchStarted | RunFinished | BenchFinished
ProgressSink = Callable[[BenchEvent], None]


class TerminalProgress:
    """A Rich progress bar on stderr: runs done, pass rate so far, time left."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("bench"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("worked {task.fields[rate]}"),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task("bench", total=None, rate="-")

    def __call__(self, event: BenchEvent) -> None:
        if isinstance(event, BenchStarted):
            rate = f"{100 * event.worked / event.done:.0f}%" if event.done else "-"
            self._progress.update(self._task, total=event.total, completed=event.done, rate=rate)
            self._progress.start()
        elif isinstance(event, RunFinished):
            rate = f"{100 * event.pass_rate:.0f}% ({event.worked}/{event.done})"
            self._progress.update(self._task, completed=event.done, rate=rate)
        else:
            self._progress.stop()
