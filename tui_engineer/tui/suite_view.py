"""The test runs in the panes: the suite on the starting commit (the baseline), each run's
live output and its result. Mixed into `TuiEngineerApp` beside `EngineEventView`, whose
`on_engine_event` finds these `_on_<event>` handlers on the app."""

from __future__ import annotations

import re

from tui_engineer.engine import events as ev
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.panes.test_output import TestOutputPane

_DURATION = re.compile(r"\b\d+(\.\d+)?s\b")
_TEMP_PATH = re.compile(r"/\S*/(repo|worktrees?|tui-engineer\S*)\S*")
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def _run_label(scope: str, command: str) -> str:
    """What the tests pane says is running: a narrowed run (engine/verification.py) says so."""
    if scope == "affected":
        return f"the affected tests ({command})"
    if scope == "failing":
        return f"the tests that failed ({command})"
    if scope == "before":
        return f"the new tests on the old code, where they must fail ({command})"
    return command


def _finished_label(event: ev.TestsFinished) -> str:
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
    if event.old_failing:
        old = f"{len(event.old_failing)} of them failing before this session"
        label = f"{label} · {old}" if label else old
    return label


class SuiteView:
    """The test runs' events; the app's panes are its attributes."""

    deterministic: bool
    _tests_running: bool
    status: StatusBar
    chat: ChatPane
    plan_pane: PlanPane
    test_pane: TestOutputPane

    async def _on_tests_started(self, event: ev.TestsStarted) -> None:
        self._tests_running = True
        self.status.busy = "tests running"
        if event.step is not None:
            row = self.plan_pane.rows.get(event.step)
            detail = row.detail if row and row.status == "fixing" else ""
            self.plan_pane.set_status(event.step, "testing", detail)
        self.test_pane.begin(_run_label(event.scope, event.command))

    async def _on_test_output(self, event: ev.TestOutput) -> None:
        self.test_pane.write_line(self._scrub(event.line))

    def _scrub(self, line: str) -> str:
        """Snapshot mode: no temp paths or timings in the output (they change every run)."""
        if not self.deterministic:
            return line
        line = _ADDRESS.sub("0x…", _TEMP_PATH.sub("<tmp>", line))
        return _DURATION.sub("0.00s", line)

    async def _on_tests_finished(self, event: ev.TestsFinished) -> None:
        self._tests_running = False
        self.status.busy = self._idle()
        self.test_pane.finish(
            ok=event.ok,
            summary=_finished_label(event),
            passed=event.passed,
            failed=event.failed,
            errors=event.errors,
            skipped=event.skipped,
            duration=0.0 if self.deterministic else event.duration,
            failures=[(test_id, self._scrub(text)) for test_id, text in event.failures],
            tail=self._scrub(event.output_tail),
        )

    async def _on_baseline_failed(self, event: ev.BaselineFailed) -> None:
        """The suite cannot run on the starting commit: a start-up screen says why and what
        to do (the session has stopped; "Try again" leaves the app open for a new request)."""
        self._baseline_done()
        from tui_engineer.tui.screens import ProblemScreen

        def chosen(retry: bool | None) -> None:
            if not retry:
                self.exit()  # type: ignore[attr-defined]

        screen = ProblemScreen("The tests cannot run", event.message)
        self.push_screen(screen, chosen)  # type: ignore[attr-defined]

    _baseline_running = False
    BASELINE_BUSY = "tests running: the starting commit"

    def _idle(self) -> str:
        """What the status bar says is under way when the foreground's work ends: the suite on
        the starting commit may still run (a slow suite outlasts the plan call)."""
        return self.BASELINE_BUSY if self._baseline_running else ""

    async def _on_baseline_started(self, event: ev.BaselineStarted) -> None:
        self._baseline_running = True
        if not self.status.busy:
            self.status.busy = self.BASELINE_BUSY

    def _baseline_done(self) -> None:
        self._baseline_running = False
        if self.status.busy == self.BASELINE_BUSY:
            self.status.busy = ""

    async def _on_baseline_ready(self, event: ev.BaselineReady) -> None:
        self._baseline_done()
        if event.failing:
            shown = ", ".join(event.failing[:3]) + (" …" if len(event.failing) > 3 else "")
            await self.chat.note(
                f"{len(event.failing)} failing before this session: {shown}. Steps are judged "
                "without them (they are not a step's to fix unless it names them)."
            )
