"""The checks the project declares (verify/checks/declared.py), run on each step in the sandbox
on the files the step changed, judged against the starting commit (verify/checks/findings.py).

Formatters run first and their rewrite is folded into the step (said: "formatted by ruff
format"), so the tests and the human see the formatted files. Linters and type checkers run
once the tests pass; a new finding goes to the fix loop with the tool's own words, and the step
is not verified until it is gone. A finding the starting commit has too is shown, never blocks.
A check whose program is missing in the sandbox is said once and dropped; one that runs out of
its own timeout is said and not judged."""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from tui_engineer.base.safe_git import shadow_git_full_env
from tui_engineer.engine import events as ev
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.baseline import beside_steps
from tui_engineer.engine.steps.test_writes import bracketed
from tui_engineer.verify import CommandNotFound, TestReport
from tui_engineer.verify.checks.commit_hook import baseline_checkout, in_folder
from tui_engineer.verify.checks.findings import CheckResult, judge
from tui_engineer.verify.checks.found import Check

T = TypeVar("T")
FOUND_BY = "the check "  # how a finding's report names its command (no diagnosis call)


@dataclass
class _Session:
    dropped: set[str] = field(default_factory=set)  # checks whose program is missing
    # (the step's base commit, check, files) → the check's (exit code, output) there
    starts: dict[tuple[str, str, tuple[str, ...]], tuple[int | None, str]] = field(
        default_factory=dict
    )
    # (base commit, formatter, file) → would it rewrite the file there?
    unformatted: dict[tuple[str, str, str], bool] = field(default_factory=dict)


_sessions: dict[Path, _Session] = {}  # by shadow


def _session(rt: Runtime) -> _Session:
    return _sessions.setdefault(rt.workdir, _Session())


async def _files(rt: Runtime, check: Check) -> list[str]:
    changed = await asyncio.to_thread(rt.shadow.changed_files)
    paths = [p for status, p in changed if status != "D" and check.applies_to(p)]
    return [p for p in paths if (rt.workdir / p).is_file()]


def _command(check: Check, files: list[str]) -> str:
    return f"{check.command} {shlex.join(files)}" if check.files else check.command


async def _run(rt: Runtime, check: Check, command: str) -> TestReport | None:
    try:
        return await rt.sandbox.run_tests(
            rt.workdir, command, timeout=rt.options.check_timeout, **beside_steps(rt)
        )
    except CommandNotFound as missing:
        _session(rt).dropped.add(check.id)
        rt.emit(ev.Notice(message=f"The check {check.name} cannot run: {missing}. Not run again."))
        return None


async def _at_start(rt: Runtime, check: Check, files: list[str]) -> tuple[int | None, str]:
    """The check on the step's starting commit (the session's, or the last step accepted),
    on the same files (those that existed then)."""
    key = (rt.shadow.baseline, check.id, tuple(files))
    known = _session(rt).starts.get(key)
    if known is not None:
        return known
    with baseline_checkout(rt.workdir, rt.shadow.baseline) as folder:
        there = [f for f in files if (folder / f).is_file()]
        if check.files and not there:
            outcome: tuple[int | None, str] = (0, "")  # every file is new: nothing was there
        else:
            report = await _run(rt, check, in_folder(folder, _command(check, there)))
            outcome = (1, "") if report is None else (report.exit_code, report.output_tail)
    _session(rt).starts[key] = outcome
    return outcome


def _said(rt: Runtime, step: int, check: Check, result: CheckResult) -> None:
    rt.emit(
        ev.CheckFinished(
            step=step, name=check.name, ok=result.ok, duration=result.duration,
            output="" if result.ok and not result.rewrote else result.output.strip(),
            summary=result.summary(), command=result.command,
            new=len(result.new), old=len(result.old), check=check.id,
        )
    )  # fmt: skip


def _runnable(rt: Runtime, formatters: bool, quiet: bool | None = None) -> list[Check]:
    dropped = _session(rt).dropped
    return [
        c
        for c in rt.options.declared_checks
        if c.formatter == formatters and c.id not in dropped and quiet in (None, c.quiet)
    ]


async def _lint(rt: Runtime, step: int, check: Check) -> CheckResult | None:
    files = await _files(rt, check)
    if check.files and not files:
        return None
    command = _command(check, files)
    if check.quiet:  # it writes nothing here: it runs beside the tests, outside their bracket
        report = await _run(rt, check, command)
    else:
        # What a check writes (caches) is not the step's.
        async with bracketed(rt.shadow, rt.sandbox):
            report = await _run(rt, check, command)
    if report is None:
        return None
    if report.timed_out:
        result = CheckResult(check.name, command, True, report.duration, timed_out=True)
    else:
        now = (report.exit_code, report.output_tail, report.duration)
        start = None if report.exit_code == 0 else await _at_start(rt, check, files)
        result = judge(check.name, command, now, start)
    _said(rt, step, check, result)
    return result


def _blobs(workdir: Path, commit: str, files: list[str]) -> dict[str, bytes]:
    """The files as `commit` has them (those it has)."""
    found = {}
    for f in files:
        done = subprocess.run(
            ["git", "-C", str(workdir), "show", f"{commit}:{f}"],
            env=shadow_git_full_env(),
            capture_output=True,
        )
        if done.returncode == 0:
            found[f] = done.stdout
    return found


async def _rewritten_at_start(rt: Runtime, check: Check, files: list[str]) -> set[str]:
    """The files (as the starting commit has them) the formatter rewrites: copied into a scratch
    folder in the shadow (where a run may write; the sandbox keeps .git read-only), formatted
    there, compared, removed; bracketed, so none of it is the step's."""
    before = await asyncio.to_thread(_blobs, rt.workdir, rt.shadow.baseline, files)
    if not before:
        return set()
    async with bracketed(rt.shadow, rt.sandbox):
        scratch = Path(tempfile.mkdtemp(prefix=".tui-engineer-format-", dir=rt.workdir))
        try:
            for f, data in before.items():
                (scratch / f).parent.mkdir(parents=True, exist_ok=True)
                (scratch / f).write_bytes(data)
            await _run(rt, check, in_folder(scratch, _command(check, list(before))))
            return {f for f, data in before.items() if (scratch / f).read_bytes() != data}
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


async def _unformatted_at_start(rt: Runtime, check: Check, files: list[str]) -> set[str]:
    """Of `files`, those the formatter would rewrite on the step's starting commit too: the
    project does not keep them formatted, so a step is not made to reformat their old lines.
    (Run in a checkout of that commit, where its writes are thrown away.)"""
    session, unknown = _session(rt), []
    for f in files:
        if (rt.shadow.baseline, check.id, f) not in session.unformatted:
            unknown.append(f)
    if unknown:
        rewritten = await _rewritten_at_start(rt, check, unknown)
        for f in unknown:
            session.unformatted[(rt.shadow.baseline, check.id, f)] = f in rewritten
    return {f for f in files if session.unformatted[(rt.shadow.baseline, check.id, f)]}


async def _format(rt: Runtime, step: int, check: Check) -> CheckResult | None:
    """Run a formatter on the step's files; its rewrite becomes part of the step (no bracket:
    what it writes is the step's, as if the model had written it). Files it would rewrite on
    the starting commit too are left as they are."""
    files = await _files(rt, check)
    if files:
        old = await _unformatted_at_start(rt, check, files)
        files = [f for f in files if f not in old]
    if not files:
        return None
    before = {f: (rt.workdir / f).read_bytes() for f in files}
    report = await _run(rt, check, _command(check, files))
    if report is None:
        return None
    rewrote = tuple(f for f in files if (rt.workdir / f).read_bytes() != before[f])
    code = 0 if rewrote or report.timed_out else report.exit_code
    now = (code, report.output_tail, report.duration)
    start = None if code == 0 else await _at_start(rt, check, files)
    result = judge(check.name, report.command, now, start)
    result.rewrote, result.timed_out = rewrote, report.timed_out
    _said(rt, step, check, result)
    return result


@dataclass
class Formatted:
    said: list[str] = field(default_factory=list)  # "formatted by ruff format: calc.py"
    failing: list[CheckResult] = field(default_factory=list)  # could not format (new)


async def format_step(rt: Runtime, step: int) -> Formatted:
    """Run the formatters on the step's files, before its tests: what they rewrote is the
    step's from now on."""
    done = Formatted()
    for check in _runnable(rt, formatters=True):
        result = await _format(rt, step, check)
        if result is not None and result.rewrote:
            done.said.append(f"formatted by {check.name}: {', '.join(result.rewrote)}")
        elif result is not None and not result.ok:
            done.failing.append(result)
    return done


async def _lints(rt: Runtime, step: int, checks: list[Check]) -> list[CheckResult]:
    results = [await _lint(rt, step, check) for check in checks]
    return [r for r in results if r is not None and not r.ok]


async def beside_tests(rt: Runtime, step: int, tests: Awaitable[T]) -> tuple[T, list[CheckResult]]:
    """`tests` awaited with the checks that write nothing running beside them (the wait is the
    longer of the two, not their sum); those checks' failing results."""
    quiet = asyncio.ensure_future(_lints(rt, step, _runnable(rt, False, quiet=True)))
    try:
        done = await tests
    except BaseException:
        quiet.cancel()
        raise
    return done, await quiet


async def check_findings(
    rt: Runtime, step: int, earlier: Sequence[CheckResult] = ()
) -> TestReport | None:
    """Run the checks that write (a cache, a build) on the step once its tests passed, one
    after the other. With those that failed `earlier` (beside the tests, or formatters),
    those with a new finding as one failing report the fix loop reads, or None."""
    failing = [*earlier, *await _lints(rt, step, _runnable(rt, False, quiet=False))]
    if not failing:
        return None
    text = "\n\n".join(r.for_model() for r in failing)
    names = ", ".join(r.name for r in failing)
    return TestReport(
        command=f"{FOUND_BY}{names}",
        exit_code=1,
        duration=sum(r.duration for r in failing),
        timed_out=False,
        errors=len(failing),
        output_tail=text,
        note=f"the tests pass; the project's own checks ({names}) found new problems: fix them",
        said="; ".join(f"{r.name}: {r.summary()}" for r in failing),
    )
