"""The project's own checks in the Tests pane: a row per check run on the step (the commit hook,
each linter, type checker and formatter the project declares), its mark, name, findings and
time, updated in place as each attempt runs it again."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui_engineer.engine import events as ev


def check_row(event: ev.CheckFinished, colours: tuple[str, str], timed: bool = True) -> Text:
    """`✓ ruff check · 1 from before this session · 0.1s`."""
    ok, bad = colours
    said = event.summary or ("passed" if event.ok else "refused the step")
    if not event.ok:
        said += " (sent to the model)"
    row = Text.assemble(("✓ " if event.ok else "✗ ", ok if event.ok else bad), (event.name, "bold"))
    row.append(f" · {said}")
    if timed:
        row.append(f" · {event.duration:.1f}s", "dim")
    return row


class CheckRows(Static):
    """One row per check, by name; hidden while no check ran on the step shown."""

    DEFAULT_CSS = """
    CheckRows { height: auto; padding: 0 1; display: none; }
    CheckRows.-shown { display: block; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.rows: dict[str, ev.CheckFinished] = {}

    def show(self, event: ev.CheckFinished, colours: tuple[str, str], timed: bool = True) -> None:
        self.rows[event.name] = event
        text = Text("\n").join(check_row(e, colours, timed) for e in self.rows.values())
        self.update(text)
        self.add_class("-shown")

    def clear_rows(self) -> None:
        self.rows = {}
        self.update("")
        self.remove_class("-shown")

    @property
    def text(self) -> str:
        """The rows as plain text (what a test reads)."""
        return "\n".join(check_row(e, ("", ""), False).plain for e in self.rows.values())
