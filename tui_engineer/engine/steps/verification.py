"""Verify one attempt, fastest signal first: the tests that failed last time (when the fix stays
inside what they cover), then the tests the step's changes can affect, and only when those pass
the full suite, once, before the proposal reaches review. A failure at any stage goes to
diagnosis at once. With `full_tests_always` (or a test command that cannot be narrowed) every
attempt runs the full command, as before."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_engineer.engine import events as ev
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.baseline import beside_steps
from tui_engineer.verify import TestReport
from tui_engineer.verify.selection import TestRun, TestSelection, plumbing_failure

TESTMON_MISSING = (
    "pytest-testmon is not installed where the tests run: choosing the affected tests by "
    "name and imports instead (install it there for coverage-based selection)."
)


@dataclass
class Verified:
    report: TestReport  # the run that decides: the failing one, or the full suite
    runs: list[tuple[str, TestReport]] = field(default_factory=list)  # (scope, report) in order

    def summaries(self) -> tuple[str, ...]:
        return tuple(f"{scope}: {report.summary()}" for scope, report in self.runs)


async def _run(rt: Runtime, step: int, selection: TestSelection, run: TestRun) -> TestReport:
    if run.reason:
        rt.emit(ev.Notice(message=f"Running the full test suite: {run.reason}."))
    report = await rt.run_tests(step, command=run.command, scope=run.scope)
    await asyncio.to_thread(selection.after_run, run, report, rt.workdir)
    return report


async def _probe(rt: Runtime, selection: TestSelection) -> bool:
    # Beside the steps' runs: it leaves the run started early to the first step.
    command = selection.probe_command()
    report = await rt.sandbox.run_tests(rt.workdir, command, timeout=120, **beside_steps(rt))
    if report.exit_code != 0:
        rt.emit(ev.Notice(message=TESTMON_MISSING))
    return report.exit_code == 0


def start_probe(rt: Runtime, selection: TestSelection) -> asyncio.Future[bool] | None:
    """Once per session: is pytest-testmon importable where the tests run? (A quick
    `pytest -p pytest-testmon --help`, not shown: it is not a test run.) The first caller
    starts the check; later ones (the first narrowed verification, a step prepared in the
    background) share it. None when the answer is known."""
    if selection.testmon is not None:
        return None
    if selection.probing is None:
        selection.probing = asyncio.ensure_future(_probe(rt, selection))
        # Retrieved here too: a session that ends before any verification waits for it.
        selection.probing.add_done_callback(lambda f: f.cancelled() or f.exception())
    return selection.probing


def probe_early(rt: Runtime) -> None:
    """At session start: the check runs beside the plan and the first model call, not before
    the first narrowed run (a pytest start-up, seconds on a loaded machine)."""
    if rt.selection is not None and rt.selection.worth_narrowing():
        start_probe(rt, rt.selection)


async def ensure_probed(rt: Runtime, selection: TestSelection) -> None:
    probing = start_probe(rt, selection)
    if probing is not None:
        selection.testmon = await asyncio.shield(probing)


async def _first_run(rt: Runtime, selection: TestSelection, failing: Sequence[str]) -> TestRun:
    changed = [path for _, path in await asyncio.to_thread(rt.shadow.changed_files)]
    if failing and (run := selection.failing_run(failing)) is not None:
        selection.touched |= set(changed)
        return run
    return await asyncio.to_thread(selection.affected_run, rt.workdir, changed)


def _decides(run: TestRun, report: TestReport) -> bool:
    """A narrowed run decides when it fails; one that ran no test at all (pytest's "not found"
    or "no tests collected": ids gone, nothing selected) does not."""
    if run.scope == "full":
        return True
    if report.ok:
        return False
    ran = report.passed + report.failed + report.errors
    return not (ran == 0 and report.exit_code in (4, 5))


def _turn_off(rt: Runtime, selection: TestSelection, run: TestRun, reason: str) -> None:
    if selection.turn_off(reason):
        rt.emit(
            ev.Notice(
                message=f"Test narrowing is off for this session: the narrowed run "
                f"`{run.command}` failed as a run, not in its tests ({reason}). The whole "
                "suite runs with the plain command from now on."
            )
        )


def _say_costs(rt: Runtime, selection: TestSelection) -> None:
    """Once a session: narrowed runs cost half the full suite or more here, so none runs."""
    costs = selection.timings.narrowing_costs()
    if costs is None or not selection.turn_off("narrowed runs cost too much here"):
        return
    narrowed, full = costs
    rt.emit(
        ev.Notice(
            message=f"Each attempt runs the whole suite: a narrowed run took {narrowed:.1f} s "
            f"here, half or more of the whole suite's {full:.1f} s, so running the affected "
            "tests first would slow every passing step down."
        )
    )


async def verify_attempt(rt: Runtime, step: int, failing: Sequence[str] = ()) -> Verified:
    """Run the attempt's tests. `failing`: test ids that failed in the previous attempt and
    whose coverage the fix stayed inside (they run first)."""
    verified = await _verify(rt, step, failing)
    if verified.report.old:
        await _mark_reached(rt, step, verified)
    return verified


async def _mark_reached(rt: Runtime, step: int, verified: Verified) -> None:
    """Old failures that coverage chose for a narrowed run of this attempt (pytest-testmon: they
    ran through what changed) are reached too, the step's unless disowned; the rest of reach
    is read from the code (engine/steps/reach.py, when the run is judged)."""
    if not (rt.selection is not None and rt.selection.testmon):
        return
    narrowed = {f.test_id for scope, r in verified.runs if scope != "full" for f in r.old}
    report, disowned = verified.report, rt.disowned.get(step, {})
    chosen = [f for f in report.old if f.test_id in narrowed and f.test_id not in disowned]
    report.old = [f for f in report.old if f not in chosen]
    report.failures += chosen
    for f in chosen:
        report.reach_why.setdefault(f.test_id, "its coverage runs through the change")
    report.reached = list(dict.fromkeys([*report.reached, *(f.test_id for f in chosen)]))


async def _verify(rt: Runtime, step: int, failing: Sequence[str]) -> Verified:
    selection = rt.selection
    if selection is None:
        report = await rt.run_tests(step)
        return Verified(report, [("full", report)])
    if not selection.worth_narrowing():
        _say_costs(rt, selection)
        report = await _run(rt, step, selection, selection.plain_full_run())
        return Verified(report, [("full", report)])
    await ensure_probed(rt, selection)
    runs: list[tuple[str, TestReport]] = []
    run = await _first_run(rt, selection, failing)
    while True:
        report = await _run(rt, step, selection, run)
        reason = plumbing_failure(run, selection.test_command, report)
        if reason is not None:
            # Our plumbing failed, not the step's code: never a test failure to fix.
            _turn_off(rt, selection, run, reason)
            runs.append((run.scope, report))
            run = selection.plain_full_run()
            continue
        runs.append((run.scope, report))
        if _decides(run, report):
            return Verified(report, runs)
        if run.scope == "failing":
            run = await asyncio.to_thread(selection.affected_run, rt.workdir, ())
        else:
            run = selection.full_run()
