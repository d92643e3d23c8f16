"""One step from proposal to a reviewable result: propose → apply → test → diagnose → fix.

The loop is bounded by `max_fix_attempts` and stops early when stuck (the same failure twice in a
row, the same refused edit twice, or a fix that changes nothing)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from tui_engineer.context.show import parse_show_requests
from tui_engineer.edits import EditError, apply_edits, parse_edits
from tui_engineer.edits.actions import parse_actions
from tui_engineer.edits.shapes import ReplyShape, describe_reply, unmarked_file_feedback
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.review import UNVERIFIED, Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.actions import run_actions, sandbox_runs_actions
from tui_engineer.engine.steps.baseline import baseline_ready, suite_started
from tui_engineer.engine.steps.commit_check import NAME, REFUSED_BY, hook_refusal
from tui_engineer.engine.steps.disowning import disowns_only, refused_note
from tui_engineer.engine.steps.edit_watch import no_edit, shows_an_edit, stopped_messages
from tui_engineer.engine.steps.old_failures import failing_at_start, step_aim
from tui_engineer.engine.steps.project_checks import (
    FOUND_BY,
    beside_tests,
    check_findings,
    format_step,
)
from tui_engineer.engine.steps.reach import reach_hint
from tui_engineer.engine.steps.repo_context import context_and_diff, failing_code
from tui_engineer.engine.steps.run_verdicts import TIMED_OUT, failure_signature, timed_out_note
from tui_engineer.engine.steps.seeing_more import reply_after_show
from tui_engineer.engine.steps.test_first import BeforeRun, is_test_path, run_before
from tui_engineer.engine.steps.verification import verify_attempt
from tui_engineer.llm.reply_watch import OffTrackReply, unusable
from tui_engineer.verify import TestReport
from tui_engineer.verify.selection import tree_files
from tui_engineer.verify.setup_failures import (
    DISK_FULL,
    environment_problem,
    ignored_paths,
    missing_files,
)

REPLAN_HINT = (
    "suggestion: reject with a reason that points the model elsewhere, or edit the plan "
    "to split this step"
)


@dataclass
class _Attempts:
    """Mutable state of one step's loop."""

    messages: list[prompts.Message]
    diff: str = ""  # the step's diff now; the worktree changes only through _apply
    attempt: int = 0
    report: TestReport | None = None
    last_failure: tuple[object, ...] | None = None
    last_refusal: str | None = None
    notes: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    changed_now: tuple[str, ...] = ()  # files the last applied reply changed
    test_runs: tuple[str, ...] = ()  # the last attempt's runs, "affected: 3 passed in 0.2s"
    before: BeforeRun | None = None  # a test-first step: its new tests on the old code
    stopped: OffTrackReply | None = None  # the last reply, when it was stopped with no edit
    formatted: list[str] = field(default_factory=list)  # "formatted by ruff format: calc.py"
    unanswered: list[str] = field(default_factory=list)  # NOT THIS STEP'S claims refused


async def _apply(rt: Runtime, step: Step, state: _Attempts, reply: str) -> bool | None:
    """Apply a reply's edits and sandbox actions. True: something changed; False: refused or
    empty (feedback queued for the model); None: applied but nothing changed."""
    state.messages.append({"role": "assistant", "content": reply})
    shape = describe_reply(reply)
    try:
        edits, actions = parse_edits(reply), parse_actions(reply)
        if not edits and not actions:
            asked = rt.options.show_rounds > 0 and parse_show_requests(reply)
            unmarked = None if asked else unmarked_file_feedback(reply)
            if unmarked is not None:  # a file in a fence without markers: teach the shape
                return _refused(rt, step, state, unmarked, shape)
            state.messages.append(
                prompts.show_limit_message(rt.options.show_rounds)
                if asked
                else prompts.no_edits_message()
            )
            reason = "no edits (SHOW rounds used up)" if asked else "no edits"
            rt.emit(
                ev.EditRefused(
                    step=step.index, attempt=state.attempt, reason=reason,
                    shape=shape.kind, shape_details=shape.details,
                )
            )  # fmt: skip
            return False
        await baseline_ready(rt)  # it runs in this shadow: no edit before it has read the tree
        result = (
            await asyncio.to_thread(apply_edits, rt.workdir, edits, rt.options.read_only)
            if edits
            else None
        )
    except EditError as err:
        return _refused(rt, step, state, err.feedback, shape)
    before, after = state.diff, await asyncio.to_thread(rt.shadow.diff)
    state.diff = after
    if result is not None:
        renamed = [new for _, new in result.renamed]
        changed = tuple(result.changed + result.created + result.deleted + renamed)
        state.changed_now = changed
        rt.emit(
            ev.EditsApplied(
                step=step.index, attempt=state.attempt, changed=changed, diff=after,
                shape=shape.kind, shape_details=shape.details,
            )
        )  # fmt: skip
    ran = await run_actions(rt, step.index, state.attempt, actions)
    state.actions += ran.done
    if ran.feedback:
        state.messages.append({"role": "user", "content": "\n\n".join(ran.feedback)})
    return True if after != before or ran.done else None


def _refused(rt: Runtime, step: Step, state: _Attempts, feedback: str, shape: ReplyShape) -> bool:
    rt.emit(
        ev.EditRefused(
            step=step.index, attempt=state.attempt, reason=feedback,
            shape=shape.kind, shape_details=shape.details,
        )
    )  # fmt: skip
    state.messages.append(prompts.edit_refused_message(feedback))
    if feedback == state.last_refusal:
        state.notes.append("stuck: the model sent the same unusable edit twice")
    state.last_refusal = feedback
    return False


def _failing_first(rt: Runtime, state: _Attempts) -> tuple[str, ...]:
    """The previous attempt's failing tests, when this fix stayed inside what they cover."""
    report = state.report
    if rt.selection is None or state.attempt == 0 or report is None or not report.structured:
        return ()
    failing = tuple(f.test_id for f in report.failures)
    covered = rt.selection.fix_stays_covered(rt.workdir, failing, state.changed_now)
    return failing if covered else ()


def _stuck_after_tests(state: _Attempts, report: TestReport) -> bool:
    signature = failure_signature(report)
    if signature == state.last_failure:
        state.notes.append("stuck: the same tests failed the same way twice in a row")
        return True
    state.last_failure = signature
    return False


def _test_first(rt: Runtime, step: Step) -> bool:
    return rt.options.test_first and step.test_first


def _check_before(state: _Attempts) -> bool:
    """Run the new tests on the old code again? Not after a fix that left the tests alone and
    a check that went as it should."""
    if state.before is None or state.before.problem or state.before.skipped:
        return True
    return any(is_test_path(path) for path in state.changed_now)


async def _verify(rt: Runtime, step: Step, state: _Attempts) -> None:
    """A test-first step's new tests on the old code (they must fail), then the attempt's
    tests on the whole change (they must pass)."""
    if _test_first(rt, step) and _check_before(state):
        state.before = await run_before(rt, step.index)
    formatted = await format_step(rt, step.index)  # before the tests: they see it
    if formatted.said:
        state.diff = await asyncio.to_thread(rt.shadow.diff)
        state.formatted = formatted.said
    tests = verify_attempt(rt, step.index, _failing_first(rt, state))
    verified, beside = await beside_tests(rt, step.index, tests)
    state.report, state.test_runs = verified.report, verified.summaries()
    earlier = [*formatted.failing, *beside]
    if verified.report.ok and (found := await check_findings(rt, step.index, earlier)):
        state.report, state.test_runs = found, (*state.test_runs, found.note)
    elif verified.report.ok and (refused := await hook_refusal(rt, step.index)) is not None:
        state.report, state.test_runs = refused, (*state.test_runs, f"{NAME}: refused")


async def _environment_problem(rt: Runtime, state: _Attempts) -> str | None:
    """What the environment lacks, when that (not the code) is why the tests failed."""
    report = state.report
    if report is None or report.ok:
        return None
    files = await asyncio.to_thread(tree_files, rt.workdir)  # the names alone
    missing = missing_files(report, rt.workdir)
    ignored = await asyncio.to_thread(ignored_paths, rt.root, missing) if missing else []
    return environment_problem(report, files, ignored, rt.workdir)


def _test_first_problem(state: _Attempts) -> str:
    return state.before.problem if state.before is not None else ""


async def _next_reply(rt: Runtime, step: Step, state: _Attempts, tested: bool) -> str:
    """Diagnose the failure (a separate call) and ask for a fix in the step's conversation."""
    max_attempts = rt.options.max_fix_attempts
    rt.emit(ev.AttemptStarted(step=step.index, attempt=state.attempt, max_attempts=max_attempts))
    problem = _test_first_problem(state) if tested else ""
    if problem:
        # The test itself is wrong (or missing): no diagnosis of the code needed.
        after = state.report.for_model() if state.report and not state.report.ok else ""
        state.messages.append(
            prompts.test_first_fix_message(problem, after, state.attempt, max_attempts)
        )
    elif tested and state.report is not None:
        report_text = state.report.for_model() + reach_hint(state.report)
        report_text += refused_note(state.unanswered, state.report)
        diagnosis = "(no separate diagnosis: read the test report)"
        if rt.options.diagnose and not state.report.command.startswith((REFUSED_BY, FOUND_BY)):
            diagnosis = await rt.call_model(
                prompts.diagnose_messages(step, state.diff, report_text, rt.options.conventions),
                "diagnose",
                step.index,
                deliver_feedback=False,
            )
            rt.emit(ev.Diagnosis(step=step.index, attempt=state.attempt, text=diagnosis))
        code = await failing_code(rt, report_text, state.messages)
        state.messages.append(
            prompts.fix_message(report_text, diagnosis, state.attempt, max_attempts, code)
        )
    return await reply_after_show(rt, state.messages, "fix", step.index, state.attempt)


async def _watched(rt: Runtime, step: Step, state: _Attempts, asked: Awaitable[str]) -> str | None:
    """The reply, or None when it was stopped with no edit in sight (the model is told why).
    Two stopped in a row end the session: that model cannot do the work."""
    try:
        reply = await asked
    except OffTrackReply as off:
        if state.stopped is not None:
            raise unusable(rt.model.model, state.stopped, off) from None
        state.stopped = off
        shape = describe_reply(off.partial)
        rt.emit(
            ev.EditRefused(
                step=step.index, attempt=state.attempt, reason=str(off),
                shape=shape.kind, shape_details=(*shape.details, "stopped"),
            )
        )  # fmt: skip
        state.messages += stopped_messages(off)
        return None
    if state.stopped is not None and not shows_an_edit(reply):
        # Told why its reply was stopped, it again wrote no edit at all.
        raise unusable(rt.model.model, state.stopped, no_edit(reply)) from None
    state.stopped = None
    return reply


EditsWritten = Callable[[], Awaitable[None]]


async def _loop(rt: Runtime, step: Step, state: _Attempts, on_edits: EditsWritten | None) -> None:
    propose = reply_after_show(rt, state.messages, "propose", step.index, state.attempt)
    reply = await _watched(rt, step, state, propose)
    while True:
        if reply is not None and await disowns_only(
            rt, step.index, state.messages, state.report, reply, state.unanswered
        ):
            if _passed(state):
                return  # what still fails is the repository's, says the model: the human sees why
            applied: bool | None = None  # the next fix is asked with the same report
        else:
            applied = False if reply is None else await _apply(rt, step, state, reply)
            if applied is None and state.attempt > 0:
                state.notes.append("stuck: the last fix changed nothing")
                return
            if applied is not False and rt.options.unverified:
                return  # no test command: the human reviews the change untested
            if applied and on_edits is not None:
                await on_edits()  # once: the next step may start on these files
                on_edits = None
            if applied is not False and not await _tested(rt, step, state):
                return
            if applied is False and any(note.startswith("stuck") for note in state.notes):
                return
        if state.attempt >= rt.options.max_fix_attempts:
            state.notes.append(f"gave up after {state.attempt} fix attempts")
            return
        state.attempt += 1
        step.status = "fixing"
        if applied is not False:  # the fix's run starts up while the model writes the fix
            await rt.prewarm_tests()
        fix = _next_reply(rt, step, state, tested=applied is not False)
        reply = await _watched(rt, step, state, fix)


def _passed(state: _Attempts) -> bool:
    """The tests pass, and a test-first step's new test failed on the old code (a test-first
    problem goes back to the model even when the tests pass: _next_reply says why)."""
    return state.report is not None and state.report.ok and not _test_first_problem(state)


async def _tested(rt: Runtime, step: Step, state: _Attempts) -> bool:
    """Test what a reply changed. False: the loop ends here (passed, or stuck)."""
    step.status = "testing"
    await _verify(rt, step, state)
    if state.report is not None and state.report.timed_out:
        # Cut by the timeout, the run says nothing about the code: keep the change, ask no model.
        state.notes.append(timed_out_note(state.report, rt.options.test_timeout))
        return False
    problem = await _environment_problem(rt, state)
    no_room = problem is not None and problem.startswith(DISK_FULL)  # no install frees space
    if problem is not None and (no_room or not sandbox_runs_actions(rt)):
        # No edit fixes a missing program, package or ignored file: say what is missing.
        state.notes.append(f"stuck: the test environment is missing something: {problem}")
        return False
    if problem is not None:  # docker: the fix is an install action, not a code change
        state.messages.append(prompts.environment_message(problem))
    report = state.report
    assert report is not None
    return not (_passed(state) or (not report.ok and _stuck_after_tests(state, report)))


async def propose_step(
    rt: Runtime,
    request: str,
    plan: Sequence[Step],
    step: Step,
    rejections: Sequence[str] = (),
    on_edits: EditsWritten | None = None,
) -> Proposal:
    """Work on `step` in the shadow worktree until its tests pass or the loop gives up.
    `on_edits` is awaited once, when the first edits are written (before their tests run)."""
    ledger = rt.model.ledger
    start_prompt, start_completion = ledger.prompt_tokens, ledger.completion_tokens
    step.status = "proposing"
    # What the step is about: the tests red at the start that it is to make pass.
    aim = rt.aims[step.index] = step_aim(request, plan, step)
    await suite_started(rt)  # no model call before the tests are known to start
    failing = await failing_at_start(rt, aim)

    def messages_with(listing: str, contents: str) -> list[prompts.Message]:
        return prompts.propose_messages(
            request,
            plan,
            step,
            listing,
            contents,
            rejections,
            actions=sandbox_runs_actions(rt),
            show=(rt.options.show_rounds, rt.options.show_lines),
            test_first=_test_first(rt, step),
            conventions=rt.options.conventions,
            failing=failing,
        )

    context, before = await context_and_diff(rt, request, messages_with("", ""), step)
    messages = messages_with(context.listing, context.contents)
    state = _Attempts(messages=messages, diff=before)
    rt.emit(ev.AttemptStarted(step=step.index, attempt=0, max_attempts=rt.options.max_fix_attempts))
    await _loop(rt, step, state, on_edits)
    if any(note.startswith(("stuck", "gave up")) for note in state.notes):
        # Looping further would not help: suggest changing course instead.
        state.notes.append(REPLAN_HINT)
    for note in state.notes:
        if note.startswith(("stuck", TIMED_OUT)):
            rt.emit(ev.Stuck(step=step.index, reason=note))
    step.status = "review"
    state.notes += state.formatted  # said in the review: the formatter's rewrite is in the diff
    return Proposal(
        step=step,
        plan=list(plan),
        diff=state.diff,
        report=state.report,
        attempts=state.attempt,
        notes=state.notes,
        actions=state.actions,
        test_runs=_review_runs(rt, state),
        before=state.before,
        unverified=rt.options.unverified,
        prompt_tokens=ledger.prompt_tokens - start_prompt,
        completion_tokens=ledger.completion_tokens - start_completion,
        usd=ledger.usd,
    )


def _review_runs(rt: Runtime, state: _Attempts) -> tuple[str, ...]:
    """The runs the review shows; a test-first step's "before" run comes first."""
    if rt.options.unverified:
        return (UNVERIFIED,)
    if state.before is None:
        return state.test_runs
    after = []
    for run in state.test_runs:
        scope, _, summary = run.partition(": ")
        after.append(f"after the change ({scope}): {summary}")
    return (state.before.line(), *after)
