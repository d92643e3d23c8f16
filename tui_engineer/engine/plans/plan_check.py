"""The plan stays right (issue 35, the seeds' self-reflection): while a step is reviewed, one
short and cheap model call asks whether the steps still to come would still be needed once it
is accepted. A step the accepted work made unnecessary is never dropped silently: when its turn
comes it is shown as a proposal to drop it (engine/session.py): the human accepts the drop, or
rejects it with a reason and the step is proposed as usual; the "auto" approval mode drops it
and says so.

The check is asked as the proposal reaches review, not after the accept: the human's reading
covers its wait, so its answer is in by the time the next step's turn comes, and nobody waits
for it (a step whose turn comes before it answered is proposed as usual). A decision other than
an accept throws it away. Its reply is a few lines: KEEP, or one `DROP N: why` per step no
longer needed; anything else keeps the plan as it is.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence

from tui_engineer.engine import events as ev
from tui_engineer.engine.cleanup import settle
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.prompts import Message
from tui_engineer.engine.reviews.review import Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.llm.errors import LLMError

CHECK = """You check a plan while it is carried out. The request was:

{request}

Done and committed so far:
{done}

Step {index} ("{title}") is about to be accepted; it changes: {files}.

Still to come:
{pending}

Will each step still to come still need doing once step {index} is in? Reply with
the single word KEEP when every one does. Otherwise reply one line per step that the work
already done made unnecessary, and nothing else:
DROP <step number>: <why, in a few words>"""

DROP_OR_KEEP = "Accept to drop it, or reject it with a reason to have it proposed."

_DROP = re.compile(r"^\s*DROP\s+(?:step\s+)?(\d+)\s*[:\-–]\s*(.+?)\s*$", re.I | re.M)


_CHANGED = re.compile(r"^\+\+\+ b/(.+)$", re.MULTILINE)


def check_messages(request: str, plan: Sequence[Step], accepted: Step, diff: str) -> list[Message]:
    """The check's one message: the request, the steps done, the one under review and the
    files it changes, and the steps still to come."""
    done = [s for s in plan if s.status == "accepted"]
    pending = _to_come(plan, accepted)
    files = _CHANGED.findall(diff) or accepted.files
    text = CHECK.format(
        request=request,
        done="\n".join(f"{s.index}. {s.title}" for s in done) or "(nothing)",
        index=accepted.index,
        title=accepted.title,
        files=", ".join(files) or "no files",
        pending="\n".join(f"{s.index}. {s.title}: {s.description}" for s in pending),
    )
    return [{"role": "user", "content": text}]


def _to_come(plan: Sequence[Step], reviewed: Step) -> list[Step]:
    return [s for s in plan if s.status == "pending" and s is not reviewed]


def read_drops(reply: str, pending: Sequence[Step]) -> dict[int, str]:
    """The steps still to come that the reply drops, with why (a number that names no step
    still to come is ignored: the check may only drop, never touch what is done)."""
    indexes = {s.index for s in pending}
    return {int(n): why for n, why in _DROP.findall(reply) if int(n) in indexes and why}


class PlanCheck:
    """One check at a time: asked as a proposal reaches review, kept when it is accepted, read
    when a later step's turn comes."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._task: asyncio.Task[dict[int, str]] | None = None
        self._asked_for: Proposal | None = None  # reviewed again (git refused it): not again
        self._found: dict[int, str] = {}

    def on_review(self, request: str, plan: list[Step], proposal: Proposal) -> None:
        """Ask about the steps still to come, supposing `proposal` is accepted (nothing is
        asked when none are left, or a step of its own is under review)."""
        if proposal is self._asked_for and self._task is not None:
            return
        self._drop()
        self._asked_for = proposal
        step = proposal.step
        pending = _to_come(plan, step)
        if not self.rt.options.plan_check or not pending or proposal.not_needed:
            return
        messages = check_messages(request, plan, step, proposal.diff)
        self._task = asyncio.ensure_future(self._ask(messages, pending, step.index))

    def decided(self, kind: str) -> None:
        """Only an accept makes the answer true; anything else throws it away."""
        if kind != "accept":
            self._drop()

    def _drop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _ask(
        self, messages: list[Message], pending: list[Step], after: int
    ) -> dict[int, str]:
        try:
            reply = await self.rt.call_model(messages, "check", after, deliver_feedback=False)
        except LLMError as err:  # the plan stays as it is; the steps go on as planned
            self.rt.emit(ev.Notice(message=f"The plan was not checked at step {after}: {err}"))
            return {}
        drops = read_drops(reply, pending)
        titles = {s.index: s.title for s in pending}
        for index, why in drops.items():
            self.rt.emit(ev.Notice(message=(
                f"Plan check at step {after}: step {index} ({titles[index]}) looks no longer "
                f"needed once step {after} is in ({why}). When its turn comes you are asked to "
                "drop it or keep it."
            )))  # fmt: skip
        return drops

    def not_needed(self, step: Step) -> str | None:
        """Why the check found `step` no longer needed, once (None: needed, or not known yet:
        a check still out is not waited for)."""
        task = self._task
        if task is not None and task.done() and not task.cancelled() and task.exception() is None:
            self._found.update(task.result())
            self._task = None
        return self._found.pop(step.index, None)

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await settle(self._task)
