"""Asking the model for a plan: one correction round for a plan that does not parse, then the
request as one step; a reply with no plan at all is stopped early (engine/plans/plan.py PLAN_SHOWS),
and one more with no plan at all after it, stopped or not, ends the session: that model cannot
do the work."""

from __future__ import annotations

from dataclasses import replace

from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.plans.plan import (
    NO_PLAN,
    PLAN_SHOWS,
    PlanError,
    Step,
    parse_plan,
    single_step,
)
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.old_failures import failing_at_start
from tui_engineer.engine.steps.repo_context import context_for
from tui_engineer.llm.reply_watch import OffTrackReply, unusable, without_sign
from tui_engineer.verify.targets import StepAim


async def make_plan(rt: Runtime, request: str, first: int, asked: str = "") -> list[Step]:
    """The model's plan for `request`, its steps numbered from `first`."""
    options = rt.options
    writes = options.test_command if options.write_tests and first == 1 else ""
    failing = await failing_at_start(rt, StepAim(request, request), planning=True)
    bare = prompts.plan_messages(
        request,
        "",
        "",
        test_first=options.test_first,
        write_tests=writes,
        conventions=options.conventions,
        failing=failing,
    )
    context = await context_for(rt, "plan", request, bare)
    messages = prompts.plan_messages(
        request,
        context.listing,
        context.contents,
        test_first=options.test_first,
        write_tests=writes,
        conventions=options.conventions,
        failing=failing,
    )
    # Quoting the human's words or the code is no echo: only the instructions around them are.
    expect = replace(PLAN_SHOWS, quotable=(request, context.listing, context.contents, failing))
    first_off: OffTrackReply | None = None
    try:
        reply = await rt.call_model(messages, "plan", expect=expect)
        return parse_plan(reply, first_index=first)
    except OffTrackReply as off:  # stopped early: no plan at all
        first_off, reply, problem = off, off.partial, NO_PLAN
    except PlanError as err:
        problem = str(err)
    # One correction round, then fall back to doing the request as a single step; two
    # replies with no plan at all end the session: that model cannot do the work.
    messages += [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": f"That plan is invalid: {problem}\nSend the fixed plan."},
    ]
    try:
        reply = await rt.call_model(messages, "plan", expect=expect)
        return parse_plan(reply, first_index=first)
    except OffTrackReply as off:
        if first_off is not None:
            raise unusable(rt.model.model, first_off, off) from None
        problem = NO_PLAN
    except PlanError as again:
        if first_off is not None and not PLAN_SHOWS.shown_in(reply):
            # Told why its reply was stopped, it again wrote no plan at all.
            raise unusable(rt.model.model, first_off, without_sign(PLAN_SHOWS, reply)) from None
        problem = str(again)
    rt.emit(ev.Notice(message=f"Plan unusable ({problem}); doing it as one step."))
    return [single_step(request, first, asked=asked)]
