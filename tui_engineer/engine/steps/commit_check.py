"""The user's pre-commit hook as part of a step's verification (verify/checks/commit_hook.py
says what it sees). Run in the sandbox once a step's tests pass; a refusal becomes the attempt's
failing report, the hook's own words what the model reads. A hook that refuses the starting
commit too is the repository's: said once, never blocking."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.engine import events as ev
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.baseline import beside_steps
from tui_engineer.engine.steps.test_writes import bracketed
from tui_engineer.verify import TestReport
from tui_engineer.verify.checks.commit_hook import (
    baseline_checkout,
    find_hook,
    in_folder,
    is_framework_hook,
    staged,
)
from tui_engineer.verify.checks.precommit import CONFIG

NAME = "pre-commit hook"
REFUSED_BY = f"the {NAME} "  # how a refusal's report names its command (no diagnosis call)
HOOK_TIMEOUT = 120.0  # seconds: a hook that hangs does not hold the step


@dataclass
class _Hook:
    path: Path | None
    old_refusal: bool | None = None  # does it refuse the starting commit? (asked once)


_hooks: dict[Path, _Hook] = {}  # by shadow: one session's hook, found once


def _hook(rt: Runtime) -> _Hook:
    found = _hooks.get(rt.workdir)
    if found is None:
        path = find_hook(rt.root)
        if path is not None and _framework_with_checks(rt, path):
            path = None
        found = _hooks[rt.workdir] = _Hook(path)
    return found


def _framework_with_checks(rt: Runtime, hook: Path) -> bool:
    """The pre-commit framework's own hook, whose config's hooks run as declared checks
    (verify/checks/precommit.py): not run before review (it would fetch each hook's environment
    from the network, and stash); said once. The accept still runs it."""
    if not is_framework_hook(hook):
        return False
    if not any(CONFIG in check.reason for check in rt.options.declared_checks):
        return False
    rt.emit(
        ev.Notice(
            message=f"Your {NAME} is the pre-commit framework's: the hooks of its {CONFIG} run "
            "on each step as the checks listed at the start, not the framework itself (the "
            "accept still runs it)."
        )
    )
    return True


async def _run(rt: Runtime, command: str) -> TestReport:
    # In the shadow: what the sandbox lets a run there read holds the hook's copy and index.
    return await rt.sandbox.run_tests(rt.workdir, command, timeout=HOOK_TIMEOUT, **beside_steps(rt))


async def _on_step(rt: Runtime, hook: Path) -> TestReport:
    tree = await asyncio.to_thread(rt.shadow.step_tree)
    with staged(rt.workdir, tree, hook) as command:
        async with bracketed(rt.shadow, rt.sandbox):  # what the hook writes is not the step's
            return await _run(rt, command)


async def _refuses_at_start(rt: Runtime, hook: Path) -> bool:
    with baseline_checkout(rt.workdir, rt.shadow.baseline) as folder:
        with staged(rt.workdir, rt.shadow.baseline, hook) as command:
            report = await _run(rt, in_folder(folder, command))
    return report.exit_code != 0


async def hook_refusal(rt: Runtime, step: int) -> TestReport | None:
    """Run the hook on the step (its tests passed); the refusal as a failing report, or None."""
    if not rt.options.commit_hook_check:
        return None
    found = _hook(rt)
    if found.path is None or found.old_refusal:
        return None
    report = await _on_step(rt, found.path)
    refused = report.exit_code != 0
    if refused and found.old_refusal is None:
        found.old_refusal = await _refuses_at_start(rt, found.path)
        if found.old_refusal:
            rt.emit(
                ev.Notice(
                    message=f"Your {NAME} ({found.path}) refuses the starting commit too: it "
                    "was failing before this session, so it does not block a step (the accept "
                    f"still runs it).\n{report.output_tail.strip()}"
                )
            )
            return None
    tail = report.output_tail.strip()
    rt.emit(
        ev.CheckFinished(
            step=step, name=NAME, ok=not refused, duration=report.duration,
            output=tail if refused else "",
        )
    )  # fmt: skip
    if not refused:
        return None
    report.command = f"{REFUSED_BY}({found.path}), which `git commit` runs"
    report.note = "the tests pass; the commit hook refused the step: fix what it says"
    report.passed = report.failed = report.skipped = 0
    report.errors = 1
    report.said = f"the {NAME} refused the step"  # what a step left so is said to be
    return report
