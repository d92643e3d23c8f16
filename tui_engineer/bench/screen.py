"""The bench screen: live progress of `tui-engineer bench --tui`, from the same progress events
as the terminal bar (runs done, pass rate so far, one row per finished run)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, ProgressBar, Static

from tui_engineer.bench.progress import BenchEvent, BenchFinished, BenchStarted, RunFinished


def _mark(value: bool) -> str:
    return "✓" if value else "✗"


class BenchScreen(Screen[None]):
    DEFAULT_CSS = """
    BenchScreen { padding: 1 2; }
    BenchScreen #bench-title { text-style: bold; color: $primary; }
    BenchScreen #bench-bar { margin: 1 0; }
    BenchScreen #bench-rate { color: $success; margin-bottom: 1; }
    BenchScreen DataTable { height: 1fr; }
    """
    BINDINGS = [("q", "app.quit", "Quit")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title
        self.finished = False

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="bench-title", markup=False)
        yield ProgressBar(id="bench-bar", show_eta=True)
        yield Static("starting…", id="bench-rate")
        yield DataTable(id="bench-runs", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("task", "config", "#", "ran", "worked", "perfect", "fixes", "tokens", "s")

    def handle(self, event: BenchEvent) -> None:
        bar = self.query_one(ProgressBar)
        rate = self.query_one("#bench-rate", Static)
        if isinstance(event, BenchStarted):
            bar.update(total=event.total, progress=event.done)
            rate.update(f"{event.done} of {event.total} runs already done (resumed)")
        elif isinstance(event, RunFinished):
            bar.update(total=event.total, progress=event.done)
            rate.update(
                f"worked so far: {100 * event.pass_rate:.1f}% ({event.worked}/{event.done}), "
                f"{event.total - event.done} to go"
            )
            r = event.result
            self.query_one(DataTable).add_row(
                r.task, r.config, str(r.repeat), _mark(r.ran), _mark(r.worked), _mark(r.perfect),
                str(r.fix_attempts), str(r.prompt_tokens + r.completion_tokens),
                f"{r.wall_seconds:.1f}",
            )  # fmt: skip
        elif isinstance(event, BenchFinished):
            self.finished = True
            share = 100 * event.worked / event.done if event.done else 0.0
            rate.update(
                f"done: {event.done}/{event.total} runs, worked {share:.1f}% — press q to quit"
            )
