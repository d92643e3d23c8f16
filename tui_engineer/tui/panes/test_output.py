"""The test output pane: the live log of a test run, its counts, and its failures.

Output can arrive thousands of lines a second, so lines are buffered and written to a bounded
`Log` at most every `FLUSH_SECONDS`. After a run, each failing test is listed; selecting one
shows its traceback in place of the log (escape goes back). `t` runs the tests again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.timer import Timer
from textual.widgets import Log, OptionList, Static
from textual.widgets.option_list import Option

from tui_engineer.engine import events as ev
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.engine_messages import EngineMessage, heard
from tui_engineer.tui.panes.check_rows import CheckRows
from tui_engineer.tui.panes.test_labels import finished_label, run_label, scrubbed

FLUSH_SECONDS = 0.05
DEFAULT_MAX_LINES = 5000


class TestOutputPane(Vertical):
    """Streams a test run and summarises it. Call its methods from the UI thread."""

    __test__ = False  # not a pytest test class, despite the name

    DEFAULT_CSS = """
    TestOutputPane {
        height: 1fr;
        & > #test-header { height: 1; padding: 0 1; background: $panel; }
        & > #test-runs { height: auto; padding: 0 1; display: none; color: $text-muted; }
        & > #test-runs.-shown { display: block; }
        & > #test-failures { height: auto; max-height: 6; display: none; border: none; }
        & > #test-failures.-shown { display: block; }
        & > Log { height: 1fr; background: $surface; }
        & > #test-traceback { display: none; }
        &.-traceback > #test-traceback { display: block; }
        &.-traceback > #test-log { display: none; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "show_log", "Back to output", show=False),
    ]

    class FailureSelected(Message):
        """The user picked a failing test; its traceback is now shown."""

        def __init__(self, test_id: str) -> None:
            super().__init__()
            self.test_id = test_id

    def __init__(
        self,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        deterministic: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, classes=classes)
        self.max_lines = max_lines
        self.deterministic = deterministic  # snapshots: no temp paths or timings shown
        self._buffer: list[str] = []
        self._flush_timer: Timer | None = None
        self._failures: dict[str, str] = {}
        self.header_text = "No test run yet."
        self.runs_text = ""  # the runs behind the proposal under review, one per line
        self.running = False
        self._lines_this_run = 0  # lines of the current run written to the log

    def compose(self) -> ComposeResult:
        yield Static(self.header_text, id="test-header")
        yield Static("", id="test-runs")
        yield CheckRows(id="test-checks")  # a row per check of the project's (check_rows.py)
        yield OptionList(id="test-failures")
        yield Log(max_lines=self.max_lines, id="test-log")
        yield Log(id="test-traceback")

    # -- `t`: run the tests again (bound on the session's screen: it works on any pane) -----

    def run_tests(self, controller: SessionController) -> None:
        """The suite again on the step under review, when the engine waits for the human;
        otherwise it says why not."""
        session = controller.session
        if session is None:
            self.notify("No session yet: the tests run once a request starts.", title="Tests")
            return
        if controller.tests_running:
            self.notify("The tests are running now: their result shows in Tests.", title="Tests")
            return
        if not controller.reviewer.waiting:
            self.notify(
                "The model is working: the tests run on its step as soon as it is written. "
                "Press t while the engine waits for you (a review) to run them again.",
                title="Tests",
            )
            return
        if session.rt.options.unverified:
            self.notify("No test command: this session is unverified.", title="Tests")
            return
        controller.tests_running = True
        controller.tests = self.app.run_worker(
            session.rerun_tests(), group="tests", exit_on_error=False
        )
        self.app.refresh_bindings()

    # -- public API --------------------------------------------------------------------------

    def begin(self, command: str) -> None:
        """A new run: clear everything; the header says what is running."""
        self._buffer.clear()
        self._failures = {}
        self._lines_this_run = 0
        self.running = True
        self.query_one("#test-log", Log).clear()
        failures = self.query_one("#test-failures", OptionList)
        failures.clear_options()
        failures.remove_class("-shown")
        self.show_runs(())
        self.remove_class("-traceback")
        running = self.app.current_theme.warning or "yellow"
        self._set_header(Text.assemble(("● ", f"bold {running}"), f"running {command}…"))

    def write_line(self, line: str) -> None:
        """One line of output; buffered, then written in batches. pytest's session header,
        its report-file path and its closing counts line are left out: the pane's header has
        the counts, once."""
        if is_pytest_noise(line):
            return
        self._buffer.append(_PROGRESS_PADDING.sub("  ", line, count=1))
        self._lines_this_run += 1
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(FLUSH_SECONDS, self.flush)

    def flush(self) -> None:
        """Write buffered lines now (only the last `max_lines` can ever be shown)."""
        self._flush_timer = None
        if not self._buffer:
            return
        lines, self._buffer = self._buffer[-self.max_lines :], []
        self.query_one("#test-log", Log).write_lines(lines)

    def finish(
        self,
        *,
        ok: bool,
        summary: str,
        passed: int,
        failed: int,
        errors: int,
        skipped: int,
        duration: float,
        failures: Sequence[tuple[str, str]],
        tail: str = "",
    ) -> None:
        """The run ended: counts and duration in the header, failing tests listed to pick from.
        `tail`: a failing run's last lines, written when none of its output reached the log
        (a run that did not stream: the user must still see why it failed)."""
        if not ok and tail and not self._lines_this_run:
            self._buffer.extend(tail.splitlines())
        if self._flush_timer is not None:
            self._flush_timer.stop()
        self.flush()
        self.running = False
        self._failures = dict(failures)
        theme = self.app.current_theme
        colours = (theme.success or "green", theme.error or "red")
        header = _summary_text(ok, summary, (passed, failed, errors, skipped), duration, colours)
        self._set_header(header)
        options = self.query_one("#test-failures", OptionList)
        options.clear_options()
        options.add_options([Option(f"✗ {test_id}", id=test_id) for test_id in self._failures])
        options.set_class(bool(self._failures), "-shown")

    def show_runs(self, runs: Sequence[str]) -> None:
        """The runs behind a review, one per line under the header (whole, wrapped where the
        pane is narrow: a border line cut them short): "before the change: …", "full: …"."""
        self.runs_text = "\n".join(runs)
        view = self.query_one("#test-runs", Static)
        view.update(Text(self.runs_text))
        view.set_class(bool(runs), "-shown")

    @property
    def lines(self) -> list[str]:
        """The lines the log holds now (bounded by `max_lines`)."""
        return list(self.query_one("#test-log", Log).lines)

    @property
    def failures(self) -> list[str]:
        return list(self._failures)

    def show_traceback(self, test_id: str) -> bool:
        """Show `test_id`'s traceback in place of the log; False if it is not a known failure."""
        if test_id not in self._failures:
            return False
        view = self.query_one("#test-traceback", Log)
        view.clear()
        view.write_lines(
            [f"── {test_id}  (escape: back to output)", *self._failures[test_id].splitlines()]
        )
        view.scroll_home(animate=False)
        self.add_class("-traceback")
        return True

    @property
    def showing_traceback(self) -> bool:
        return self.has_class("-traceback")

    # -- internals -------------------------------------------------------------------------

    def _set_header(self, text: Text) -> None:
        self.header_text = text.plain
        self.query_one("#test-header", Static).update(text)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        test_id = event.option.id
        if test_id is not None and self.show_traceback(test_id):
            self.post_message(self.FailureSelected(test_id))

    def action_show_log(self) -> None:
        self.remove_class("-traceback")

    # ----- the engine's events about test runs (tui/engine_messages.py)

    def scrub(self, line: str) -> str:
        """Snapshot mode: no temp paths or timings in the output (they change every run)."""
        return scrubbed(line) if self.deterministic else line

    @on(heard(ev.TestsStarted))
    def _tests_started(self, message: EngineMessage[ev.TestsStarted]) -> None:
        self.begin(run_label(message.event.scope, message.event.command))

    @on(heard(ev.TestOutput))
    def _test_output(self, message: EngineMessage[ev.TestOutput]) -> None:
        self.write_line(self.scrub(message.event.line))

    @on(heard(ev.TestsFinished))
    def _tests_finished(self, message: EngineMessage[ev.TestsFinished]) -> None:
        event = message.event
        self.finish(
            ok=event.ok,
            summary=finished_label(event),
            passed=event.passed,
            failed=event.failed,
            errors=event.errors,
            skipped=event.skipped,
            duration=0.0 if self.deterministic else event.duration,
            failures=[(test_id, self.scrub(text)) for test_id, text in event.failures],
            tail=self.scrub(event.output_tail),
        )

    @on(heard(ev.CheckFinished))
    def _check_finished(self, message: EngineMessage[ev.CheckFinished]) -> None:
        theme = self.app.current_theme
        colours = (theme.success or "green", theme.error or "red")
        self.query_one(CheckRows).show(message.event, colours, timed=not self.deterministic)

    @on(heard(ev.ProposalReady))
    def _proposal_ready(self, message: EngineMessage[ev.ProposalReady]) -> None:
        """Affected tests first, then the full suite: the review shows both runs (and a
        session without tests says so where the results would be)."""
        event = message.event
        runs = event.test_runs if len(event.test_runs) > 1 or event.unverified else ()
        self.show_runs([self.scrub(run) for run in runs])

    @on(heard(ev.DecisionMade))
    def _decision(self, message: EngineMessage[ev.DecisionMade]) -> None:
        if message.event.decision not in ("edited", "retest"):  # tested and shown again
            self.show_runs(())
            self.query_one(CheckRows).clear_rows()


_PYTEST_NOISE = re.compile(
    r"^\s*(=+ test session starts =+"
    r"|platform \S+ -- Python.*"
    r"|(cachedir|rootdir|configfile|plugins|testpaths): .*"
    r"|collect(ed|ing) \d+ items?"
    r"|-+ generated xml file: .* -+"
    r"|=*\s*(\d+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?),? ?)+"
    r"in [\d.]+s( \(.*\))?\s*=*)\s*$"
)


# pytest pads its progress lines to the terminal width (80 columns when piped), which a narrower
# pane would cut to "[10": two spaces before the percentage are enough.
_PROGRESS_PADDING = re.compile(r"\s{3,}(?=\[\s*\d+%\]\s*$)")


def is_pytest_noise(line: str) -> bool:
    """pytest lines the Tests pane does not repeat (header, report path, closing counts)."""
    return bool(_PYTEST_NOISE.match(line))


def _summary_text(
    ok: bool,
    summary: str,
    counts: tuple[int, int, int, int],
    duration: float,
    colours: tuple[str, str],
) -> Text:
    """'✔ 3 passed · 0 failed · 1 skipped · 1.5s', bad counts in the error colour. Errors and
    skipped only when there are some: the pane is narrow next to the others."""
    passed, failed, errors, skipped = counts
    good, bad = colours
    parts = Text.assemble(
        ("✔ " if ok else "✘ ", f"bold {good if ok else bad}"),
        (f"{passed} passed", good if passed else ""),
        " · ",
        (f"{failed} failed", f"bold {bad}" if failed else ""),
    )
    if errors:
        parts.append(" · ").append(f"{errors} errors", f"bold {bad}")
    if skipped:
        parts.append(f" · {skipped} skipped")
    parts.append(f" · {duration:.1f}s")
    if summary:
        parts.append(f"  {summary}", "dim")
    return parts
