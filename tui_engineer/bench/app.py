"""`tui-engineer bench … --tui`: the bench runs inside a small Textual app showing the bench
screen (bench/screen.py). The bench itself is the same coroutine as in the terminal. The bench is
a front end of its own: it imports nothing of the TUI; the command line hands it the house's
themes (`dress`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from tui_engineer.bench.bench import BenchRequest, Executor, run_bench
from tui_engineer.bench.progress import BenchEvent
from tui_engineer.bench.results import RunResult
from tui_engineer.bench.screen import BenchScreen

Dress = Callable[[App[Any]], None]  # registers the themes on an app and picks one


class BenchApp(App[None]):
    TITLE = "tui-engineer bench"

    def __init__(
        self, request: BenchRequest, execute: Executor, dress: Dress | None = None
    ) -> None:
        super().__init__()
        self.request = request
        self.execute = execute
        self.dress = dress
        self.error: BaseException | None = None
        self.results: list[RunResult] = []
        self.screen_view = BenchScreen(
            f"bench {request.suite}: {len(request.tasks)} tasks × "
            f"{len(request.configs)} configs × {request.repeats} repeats → {request.out}"
        )

    def on_mount(self) -> None:
        if self.dress is not None:
            self.dress(self)
        self.push_screen(self.screen_view)
        self.run_worker(self._bench(), exclusive=True)

    def _progress(self, event: BenchEvent) -> None:
        self.screen_view.handle(event)

    async def _bench(self) -> None:
        try:
            self.results = await run_bench(self.request, self.execute, self._progress)
        except Exception as err:  # re-raised by the CLI once the terminal is back
            self.error = err
            self.exit()
