"""The Tests pane's rows for the project's own checks: one per check by name, updated in place
when a fix runs it again, cleared for the next step."""

from __future__ import annotations

from textual.app import App, ComposeResult

from tui_engineer.engine import events as ev
from tui_engineer.tui.panes.check_rows import CheckRows, check_row

COLOURS = ("green", "red")


def _ran(name: str, ok: bool, summary: str) -> ev.CheckFinished:
    return ev.CheckFinished(step=1, name=name, ok=ok, duration=0.25, summary=summary)


def test_a_row_says_the_mark_the_name_the_findings_and_the_time() -> None:
    row = check_row(_ran("ruff check", False, "1 new finding, 2 from before this session"), COLOURS)
    assert row.plain == (
        "✗ ruff check · 1 new finding, 2 from before this session (sent to the model) · 0.2s"
    )
    hook = ev.CheckFinished(step=1, name="pre-commit hook", ok=True, duration=1.0)
    assert check_row(hook, COLOURS, timed=False).plain == "✓ pre-commit hook · passed"


class _Pane(App[None]):
    def compose(self) -> ComposeResult:
        yield CheckRows()


async def test_rows_are_kept_by_name_and_cleared() -> None:
    app = _Pane()
    async with app.run_test() as pilot:
        rows = app.query_one(CheckRows)
        assert not rows.display or not rows.has_class("-shown")
        rows.show(_ran("ruff check", False, "1 new finding"), COLOURS)
        rows.show(_ran("mypy", True, "passed"), COLOURS)
        rows.show(_ran("ruff check", True, "passed"), COLOURS)
        await pilot.pause()
        assert rows.text == "✓ ruff check · passed\n✓ mypy · passed"
        assert rows.has_class("-shown")
        rows.clear_rows()
        assert rows.text == "" and not rows.has_class("-shown")
