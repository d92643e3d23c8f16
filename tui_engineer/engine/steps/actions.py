"""Run the sandbox actions a reply asks for (install a package, run a setup command).

Only sandboxes with `apply_action` (docker) can; elsewhere the model is told to do without."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_engineer.engine import events as ev
from tui_engineer.engine.runtime import Runtime
from tui_engineer.sandbox.actions import SandboxAction


@dataclass
class ActionsOutcome:
    done: list[str] = field(default_factory=list)  # human summaries of actions that succeeded
    feedback: list[str] = field(default_factory=list)  # text for the model about failures


def sandbox_runs_actions(rt: Runtime) -> bool:
    return hasattr(rt.sandbox, "apply_action")


async def run_actions(
    rt: Runtime, step: int, attempt: int, actions: Sequence[SandboxAction]
) -> ActionsOutcome:
    outcome = ActionsOutcome()
    if not actions:
        return outcome
    if not sandbox_runs_actions(rt):
        outcome.feedback.append(
            f"The {rt.sandbox.name} sandbox cannot install packages or run setup commands, so "
            "these were not run: " + ", ".join(a.describe() for a in actions) + ". Work with what "
            "is installed, or explain in prose what the human should install."
        )
        return outcome
    for action in actions:
        result = await rt.sandbox.apply_action(  # type: ignore[attr-defined]
            action, rt.workdir, on_output=lambda line: rt.emit(ev.TestOutput(line=line))
        )
        rt.emit(
            ev.ActionApplied(
                step=step, attempt=attempt, action=action.describe(), ok=result.ok,
                summary=result.summary(),
            )
        )  # fmt: skip
        if result.ok:
            outcome.done.append(action.describe())
        else:
            outcome.feedback.append(result.for_model())
    return outcome
