"""TestOutputPane: live batched output, a bounded log, the run header, failures to jump to."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import Log, OptionList

from tui_engineer.tui.panes.test_output import TestOutputPane

TRACEBACK = "def test_sub():\n>       assert sub(3, 1) == 3\nE       assert 2 == 3\n"


class OutputApp(App[None]):
    def __init__(self, max_lines: int = 5000) -> None:
        super().__init__()
        self.max_lines = max_lines
        self.picked: list[str] = []

    def compose(self) -> ComposeResult:
        yield TestOutputPane(max_lines=self.max_lines, id="tests")

    def on_test_output_pane_failure_selected(self, event: TestOutputPane.FailureSelected) -> None:
        self.picked.append(event.test_id)


def finish_with_failures(pane: TestOutputPane) -> None:
    pane.finish(
        ok=False,
        summary="2 failed, 3 passed",
        passed=3,
        failed=2,
        errors=0,
        skipped=1,
        duration=1.54,
        failures=[
            ("tests/test_calc.py::test_sub", TRACEBACK),
            ("tests/test_calc.py::test_div", "E   ZeroDivisionError"),
        ],
    )


async def test_header_says_running_then_shows_counts_and_duration() -> None:
    app = OutputApp()
    async with app.run_test() as pilot:
        pane = app.query_one(TestOutputPane)
        pane.begin("python -m pytest -q")
        await pilot.pause()
        assert pane.header_text.endswith("running python -m pytest -q…")
        pane.write_line("tests/test_calc.py ..F")
        finish_with_failures(pane)
        await pilot.pause()
        assert "3 passed · 2 failed · 1 skipped · 1.5s" in pane.header_text
        assert pane.lines == ["tests/test_calc.py ..F"]  # finish flushes what was buffered


async def test_many_lines_are_batched_into_a_bounded_log() -> None:
    app = OutputApp(max_lines=100)
    async with app.run_test() as pilot:
        pane = app.query_one(TestOutputPane)
        pane.begin("pytest")
        for n in range(1000):
            pane.write_line(f"line {n}")
        assert pane.lines == []  # nothing written per line: one batch is coming
        await pilot.pause(0.15)
        assert len(pane.lines) == 100
        assert pane.lines[-1] == "line 999"
        pane.begin("pytest again")
        await pilot.pause()
        assert pane.lines == []  # a new run starts clean


async def test_selecting_a_failure_shows_its_traceback_and_escape_goes_back() -> None:
    app = OutputApp()
    async with app.run_test() as pilot:
        pane = app.query_one(TestOutputPane)
        pane.begin("pytest")
        finish_with_failures(pane)
        await pilot.pause()
        failures = pane.query_one("#test-failures", OptionList)
        assert failures.display and failures.option_count == 2
        failures.focus()
        failures.highlighted = 1
        await pilot.press("enter")
        await pilot.pause()
        assert app.picked == ["tests/test_calc.py::test_div"]
        await pilot.press("escape")
        failures.focus()
        failures.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.picked[-1] == "tests/test_calc.py::test_sub"
        traceback = pane.query_one("#test-traceback", Log)
        assert traceback.display and not pane.query_one("#test-log", Log).display
        assert "E       assert 2 == 3" in traceback.lines
        await pilot.press("escape")
        await pilot.pause()
        assert not pane.showing_traceback and pane.query_one("#test-log", Log).display


async def test_a_passing_run_lists_no_failures() -> None:
    app = OutputApp()
    async with app.run_test() as pilot:
        pane = app.query_one(TestOutputPane)
        pane.begin("pytest")
        pane.finish(
            ok=True,
            summary="4 passed",
            passed=4,
            failed=0,
            errors=0,
            skipped=0,
            duration=0.4,
            failures=[],
        )
        await pilot.pause()
        assert pane.header_text.startswith("✔ 4 passed · 0 failed · 0.4s")  # no zero noise
        assert not pane.query_one("#test-failures", OptionList).display
        assert pane.show_traceback("tests/test_x.py::nope") is False


async def test_pytests_padded_progress_line_fits_a_narrow_pane() -> None:
    """pytest pads its progress line to 80 columns; in a narrower pane the percentage was cut
    to "[10". The padding is squeezed so the whole line shows."""
    app = OutputApp()
    async with app.run_test(size=(60, 20)) as pilot:
        pane = app.query_one(TestOutputPane)
        pane.begin("pytest")
        pane.write_line(".." + " " * 70 + "[100%]")
        pane.write_line("tests/test_calc.py ..F" + " " * 50 + "[ 40%]")
        pane.flush()
        await pilot.pause()
        assert pane.lines == ["..  [100%]", "tests/test_calc.py ..F  [ 40%]"]
