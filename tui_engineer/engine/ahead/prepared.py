"""A step prepared ahead (engine/ahead/pipeline.py): which steps are ready to be, what one
preparation holds (its shadow, its runtime, its own chat, whether what it is built on has
passed), the sink that keeps its events until its turn, and what is said when it fails."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from tui_engineer.engine import events as ev
from tui_engineer.engine.inbox import Inbox
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.plans.step_graph import dependencies
from tui_engineer.engine.prompts import Message
from tui_engineer.engine.reviews.review import Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.llm import ServerUnreachable
from tui_engineer.vcs.shadow import Shadow


@dataclass
class Held:
    """An event sink that keeps the background step's events for later: only a finished call
    (for the record, marked as the background's) and a budget warning go out at once. Once its
    turn comes (`show`), everything goes out as it happens."""

    emit: ev.EventSink
    events: list[ev.Event] = field(default_factory=list)
    live: bool = False

    def show(self) -> None:
        """Its turn: what it held is shown, and the rest as it happens."""
        self.live = True
        held, self.events = self.events, []
        for event in held:
            self.emit(event)

    def __call__(self, event: ev.Event) -> None:
        if self.live:
            self.emit(event)
        elif isinstance(event, ev.ModelExchange):
            self.emit(replace(event, background=True))
        elif isinstance(event, ev.BudgetWarning):
            self.emit(event)
        elif not isinstance(event, ev.UsageUpdated):  # the ledger's totals: the next ones say
            self.events.append(event)


def ready_steps(
    plan: Sequence[Step], current: Step, busy: set[int], *, beside: bool = False
) -> list[Step]:
    """The pending steps, in plan order, that may be prepared on `current`'s proposal now:
    every step each waits for (engine/plans/step_graph.py) is in already, or is `current`; `busy`:
    those being prepared. `beside`: on the files before `current` (while it is proposed),
    so only those that do not wait for it."""
    after = dependencies(plan)
    done = {s.index for s in plan if s.status in ("accepted", "skipped")}
    done |= set() if beside else {current.index}
    return [
        s for s in plan
        if s.status == "pending" and s is not current and s.index not in busy
        and set(after[s.index]) <= done
    ]  # fmt: skip


@dataclass
class Ahead:
    step: Step
    held: Held
    tree: str  # the tree of the proposal it is built on
    base: str  # a commit of that proposal (pending_commit)
    request: str
    plan: list[Step]
    current: Step  # the step it is built on (under review, or being made)
    task: asyncio.Task[Proposal] | None = None
    shadow: Shadow | None = None
    rt: AheadRuntime | None = None  # its runtime, once its shadow is made
    inbox: Inbox = field(default_factory=Inbox)  # its own chat: messages that name it
    messages: list[str] = field(default_factory=list)  # every one it was given
    # Set once that step's first test run passed on the files it is built on (its affected
    # tests, while the full suite still runs): then it is proposed.
    base_started: asyncio.Event = field(default_factory=asyncio.Event)
    # Set once the proposal it is built on passed all its tests (it went to review so): only
    # then may it diagnose and fix failures of its own.
    base_passed: asyncio.Event = field(default_factory=asyncio.Event)
    base_changed: bool = False  # a fix changed those files after it began
    restacking: bool = False  # being moved onto the next files it lands on (restacking.py)

    @property
    def base_step(self) -> int:
        return self.current.index

    @property
    def asked(self) -> bool:
        """Whether its model was asked already (a message now comes too late for that call)."""
        return self.rt is not None and self.rt.asked

    def passed(self) -> None:
        self.base_started.set()
        self.base_passed.set()

    def again(self) -> Ahead:
        """A new preparation of the same step on the same base, with the same messages."""
        new = Ahead(
            self.step, Held(self.held.emit), self.tree, self.base, self.request, self.plan,
            self.current, messages=list(self.messages), base_changed=self.base_changed,
        )  # fmt: skip
        for text in new.messages:
            new.inbox.put_nowait(text)
        if self.base_started.is_set():
            new.base_started.set()
        if self.base_passed.is_set():
            new.base_passed.set()
        return new


@dataclass
class AheadRuntime(Runtime):
    """The prepared step's runtime: a diagnosis or fix (a failure of its own) waits until the
    step it is built on passed all its tests; if that step fails instead, it is dropped first."""

    base_passed: asyncio.Event = field(default_factory=asyncio.Event)
    asked: bool = False  # a model call was made (it took the chat messages given so far)
    next_up: bool = False  # it is reviewed next (or now): its runs go before the others'

    def test_rank(self) -> int:
        return 1 if self.next_up else 2

    async def call_model(
        self, messages: list[Message], purpose: str, *args: Any, **kwargs: Any
    ) -> str:
        # Runtime.call_model's arguments, passed on as they are (an `expect` too).
        if purpose != "propose":
            await self.base_passed.wait()
        self.asked = True  # Runtime.call_model takes the messages before its first await
        return await super().call_model(messages, purpose, *args, **kwargs)


def not_prepared(ahead: Ahead, err: Exception) -> str:
    """What is said when the step prepared ahead fails: once its turn came it is the step in
    progress, asked for again now; a server that stopped answering is said so (it answered a
    moment ago: no advice about its address)."""
    index = ahead.step.index
    why = "the model server stopped answering" if isinstance(err, ServerUnreachable) else str(err)
    if ahead.held.live:
        return (
            f"Step {index}'s model call, made while step {ahead.base_step} was reviewed, failed "
            f"({why}): step {index} is asked for again now."
        )
    return f"Step {index} could not be prepared ahead ({why}); it is proposed when its turn comes."


def prepare_failed(task: asyncio.Task[Proposal]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


def runtime_ahead(rt: Runtime, ahead: Ahead) -> AheadRuntime:
    """The session's runtime `rt` for `ahead`: its own shadow, events held back, an inbox of its
    own; the test selection's data is shared (and its check for testmon: one per session), but
    it never runs the suite collecting coverage (engine/ahead/pipeline.py says why)."""
    assert ahead.shadow is not None
    selection = rt.selection and replace(rt.selection, collect=False)
    shared = {f.name: getattr(rt, f.name) for f in fields(Runtime)}
    return AheadRuntime(
        **{**shared, "shadow": ahead.shadow, "emit": ahead.held, "inbox": ahead.inbox,
           "delivered": 0, "selection": selection, "review_notes": []},
        base_passed=ahead.base_passed,
    )  # fmt: skip
