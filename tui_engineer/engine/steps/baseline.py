"""The session's baseline: the suite on the starting commit, started at once beside the
planning call (in the shadow, before any edit: the first edit waits for it), or reused from a
session on the same tree. A suite that cannot run at all stops the session with what to do.
See verify/baseline.py for how a step's runs are judged against it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.base.names import is_exact_only, readable
from tui_engineer.context.git_listing import repo_file_names
from tui_engineer.engine import events as ev
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.test_writes import bracketed
from tui_engineer.vcs.partial import starting_tree
from tui_engineer.verify import CommandNotFound
from tui_engineer.verify.baseline import (
    JUNIT_NOT_UTF8,
    Baseline,
    record,
    recorded,
    start_failure_message,
    start_problem,
)
from tui_engineer.verify.report import TestReport
from tui_engineer.verify.runners.pytest import is_pytest_command
from tui_engineer.verify.started import shows_a_test_ran

UNREADABLE = (
    "The tests fail on the starting commit and their report cannot be read test by test, so "
    "old failures cannot be told from new ones: each step is judged by the exit code alone."
)


class BaselineFailed(UserError):
    """The suite cannot run on the starting commit (exit 2, before the model is asked more)."""


def _names_not_utf8(root: Path) -> str:
    """` (tests/test_caf�.py, …)`: the repository's files whose names are not UTF-8."""
    names = [readable(n) for n in repo_file_names(root) if is_exact_only(n)]
    more = f", and {len(names) - 5} more" if len(names) > 5 else ""
    return f" ({', '.join(names[:5])}{more})" if names else ""


def start_baseline(rt: Runtime) -> asyncio.Task[Baseline] | None:
    """Start the baseline (once per session); None without a test command."""
    if rt.options.unverified or not rt.options.test_command or not rt.options.baseline:
        return None
    if rt.baseline_task is None:
        rt.baseline_task = asyncio.ensure_future(_baseline(rt))
        # Retrieved here too: a session that ends before any edit must not warn about it.
        rt.baseline_task.add_done_callback(lambda t: t.cancelled() or t.exception())
    return rt.baseline_task


def beside_steps(rt: Runtime) -> dict[str, bool]:
    """Arguments for a run beside the steps' (the baseline, the testmon probe): in a sandbox
    that starts the next run early, that run stays the first step's (a cold start of the step's
    run would be on the critical path; the baseline's is not)."""
    return {"early": False} if getattr(rt.sandbox, "prewarm", None) is not None else {}


async def _baseline(rt: Runtime) -> Baseline:
    command = rt.options.test_command
    started = time.monotonic()
    # The starting commit, plus uncommitted changes brought along: what the shadow holds now.
    tree = await asyncio.to_thread(starting_tree, rt.shadow)
    kept = await asyncio.to_thread(recorded, rt.root, command, tree)
    if kept is not None:
        _ready(rt, kept, "", started, recorded_before=True)
        return kept
    rt.emit(ev.BaselineStarted(command))

    def watch(line: str) -> None:
        if shows_a_test_ran(line):
            rt.baseline_started.set()

    try:
        async with bracketed(rt.shadow, rt.sandbox):  # what the run writes is not the step's
            report = await rt.sandbox.run_tests(
                rt.workdir, command, timeout=rt.options.test_timeout, on_output=watch,
                **beside_steps(rt),
            )  # fmt: skip
    except CommandNotFound as err:
        report = TestReport(command, 127, time.monotonic() - started, False, output_tail=str(err))
    problem = start_problem(report, is_pytest_command(command))
    if problem == JUNIT_NOT_UTF8:
        problem += await asyncio.to_thread(_names_not_utf8, rt.root)
    if problem is not None:
        message = start_failure_message(command, problem, report)
        rt.emit(ev.BaselineFailed(command, problem, report.output_tail, message))
        raise BaselineFailed(message)
    baseline = Baseline.from_report(report)
    await asyncio.to_thread(record, rt.root, tree, baseline)
    _ready(rt, baseline, report.summary(), started)
    return baseline


def _ready(
    rt: Runtime, baseline: Baseline, summary: str, started: float, *, recorded_before=False
) -> None:
    rt.baseline = baseline
    if baseline.unreadable:  # run now or reused from an earlier session: it holds either way
        rt.emit(ev.Notice(message=UNREADABLE))
    rt.emit(
        ev.BaselineReady(
            command=baseline.command,
            summary=summary,
            failing=baseline.failing,
            recorded=recorded_before,
            seconds=round(time.monotonic() - started, 3),
        )
    )


async def suite_started(rt: Runtime) -> None:
    """Wait until the starting commit's suite has run a test (or finished): the first propose
    call goes out only then, so a suite that cannot start stops the session before a model
    call is paid for. Raises BaselineFailed when it cannot run."""
    task = rt.baseline_task
    if task is None or rt.baseline is not None:
        return
    started = asyncio.ensure_future(rt.baseline_started.wait())
    try:
        await asyncio.wait({started, task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        started.cancel()
    if task.done() and not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]


async def baseline_ready(rt: Runtime) -> None:
    """Wait for the baseline before the first edit (it runs in the same shadow); raises
    BaselineFailed when the suite cannot run."""
    task = rt.baseline_task
    if task is not None and rt.baseline is None:
        await asyncio.shield(task)
