"""Prepare the next step while the human reviews this one.

As soon as step k's first edits are written (while k's own tests still run), a second shadow
worktree is made for the next pending step (when everything it depends on is accepted, or is
k), whose baseline is k's proposal as it is then. Its model is asked only once k's tests passed
on those files (DESIGN.md invariant 8: never built on a failing base): as soon as k's first run
passes (its affected tests, while its full suite still runs), or when k reaches review with
those files and passing tests. A diagnosis or fix of its own waits until k passed all its tests.
When a fix changes k's files, the preparation is dropped (before any model call) and started
again on the proposal that reaches review; when k's tests fail, none is prepared. One step
ahead at most.

It is invisible until its turn. Its model calls go through the same model and ledger, so the
budgets count them; the record sees each finished call at once (a ModelExchange marked
`background`, which no UI treats as the reply on screen); its live token counts are not shown
(the status bar's counter is the step under review's, and never goes backwards); its other
events are held back and shown when the step's turn comes (and from then on as they happen: a
slow model or its own fix loop still at work shows live). A failed preparation is noted once,
quietly, and the step is proposed as usual in its turn.

A chat message is the step under review's (it goes with that step's next model call, and the
prepared step is not touched), unless it names the step prepared ahead (engine/chat_target.py):
then it goes to that step as it is sent. Before that step's model call it simply goes with the
call; after, the step is prepared again at once with it (said: NextStepRestarted), so an accept
never waits for a call made then. When that preparation is dropped, the message is kept for the
step it named: its next preparation, or its own call when its turn comes.
Once a prepared step is taken, its shadow is kept and reset to the next base for the step after
(a few files differ), instead of a new checkout of every file.

The prepared step tests like any step (affected tests first, engine/verification.py) with the
session's selection data, but never runs the suite collecting coverage (2–3× slower than a plain
run, and meanwhile k's own runs may collect): where it would, it runs the plain suite instead.

- accept k → k is committed first, at once (nothing waits for the prepared step); the prepared
  proposal is then moved onto the new commit and reviewed when ready (committed later on top of
  k's commit, like any step);
- reject / skip / stop / plan edit of k → it is dropped, and proposed again when its turn comes;
- a review's notes for the model (hunks dropped, a hand edit, line comments:
  engine/pair_review.py) → also dropped (it was prepared without them).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from tui_engineer.engine import events as ev
from tui_engineer.engine.chat_target import about_step_ahead
from tui_engineer.engine.cleanup import settle, to_the_end
from tui_engineer.engine.inbox import Inbox, put_back
from tui_engineer.engine.plan import Step
from tui_engineer.engine.prompts import Message
from tui_engineer.engine.review import Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.stacked import pending_commit, stacked_shadow, transplant
from tui_engineer.engine.step_graph import dependencies
from tui_engineer.engine.step_runner import propose_step
from tui_engineer.engine.verification import start_probe
from tui_engineer.llm import ServerUnreachable
from tui_engineer.vcs.shadow import Shadow


@dataclass
class _Held:
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


def next_candidate(plan: Sequence[Step], current: Step) -> Step | None:
    """The step the session works on after `current`, if it may start before `current` lands."""
    after = next((s for s in plan if s.status == "pending" and s is not current), None)
    if after is None:
        return None
    # Built on `current`'s proposal, it may wait for `current` but for no other step not yet in.
    done = {s.index for s in plan if s.status == "accepted"} | {current.index}
    return after if set(dependencies(plan)[after.index]) <= done else None


@dataclass
class _Ahead:
    step: Step
    held: _Held
    tree: str  # the tree of the proposal it is built on
    base: str  # a commit of that proposal (pending_commit)
    request: str
    plan: list[Step]
    current: Step  # the step it is built on (under review, or being made)
    task: asyncio.Task[Proposal] | None = None
    shadow: Shadow | None = None
    rt: _AheadRuntime | None = None  # its runtime, once its shadow is made
    inbox: Inbox = field(default_factory=Inbox)  # its own chat: messages that name it
    messages: list[str] = field(default_factory=list)  # every one it was given
    # Set once that step's first test run passed on the files it is built on (its affected
    # tests, while the full suite still runs): then it is proposed.
    base_started: asyncio.Event = field(default_factory=asyncio.Event)
    # Set once the proposal it is built on passed all its tests (it went to review so): only
    # then may it diagnose and fix failures of its own.
    base_passed: asyncio.Event = field(default_factory=asyncio.Event)
    base_changed: bool = False  # a fix changed those files after it began

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

    def again(self) -> _Ahead:
        """A new preparation of the same step on the same base, with the same messages."""
        new = _Ahead(
            self.step, _Held(self.held.emit), self.tree, self.base, self.request, self.plan,
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
class _AheadRuntime(Runtime):
    """The prepared step's runtime: a diagnosis or fix (a failure of its own) waits until the
    step it is built on passed all its tests; if that step fails instead, it is dropped first."""

    base_passed: asyncio.Event = field(default_factory=asyncio.Event)
    asked: bool = False  # a model call was made (it took the chat messages given so far)

    async def call_model(
        self, messages: list[Message], purpose: str, *args: Any, **kwargs: Any
    ) -> str:
        # Runtime.call_model's arguments, passed on as they are (an `expect` too).
        if purpose != "propose":
            await self.base_passed.wait()
        self.asked = True  # Runtime.call_model takes the messages before its first await
        return await super().call_model(messages, purpose, *args, **kwargs)


def _not_prepared(ahead: _Ahead, err: Exception) -> str:
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


def _failed(task: asyncio.Task[Proposal]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


class Pipeline:
    """At most one step prepared ahead of the one under review."""

    def __init__(self, rt: Runtime, session_id: str, *, enabled: bool = True) -> None:
        self.rt = rt
        self.session_id = session_id
        self.enabled = enabled
        self._ahead: _Ahead | None = None
        if enabled:  # it follows the step under review's test runs and fixes
            self._emit, rt.emit = rt.emit, self._watch
        self._spare: Shadow | None = None  # a taken step's shadow, reused for the next one
        self._count = 0
        self._dropping: set[asyncio.Task[None]] = set()  # preparations dropped by a restart
        # Chat messages that named a step whose preparation was dropped: they go to its next
        # preparation, or with its own call when its turn comes.
        self._kept: dict[int, list[str]] = {}

    async def start_early(self, request: str, plan: Sequence[Step], current: Step) -> None:
        """Called when `current`'s first edits are written, before its tests run: the shadow
        is made now; the model is asked once they passed (`start`)."""
        if self._ahead is None:
            await self._begin(request, plan, current)

    async def start(
        self, request: str, plan: Sequence[Step], current: Step, *, passed: bool = True
    ) -> None:
        """Called when `current`'s proposal goes to review: go on with a preparation begun on
        the same files, else (re)start it on the proposal as it is now; none when its tests
        failed (`passed` False)."""
        ahead = self._ahead
        if ahead is not None:
            now = await asyncio.to_thread(self.rt.shadow.step_tree)  # a test run may write
            if passed and now == ahead.tree:
                ahead.passed()
                return
            await self.drop()
        if passed:
            await self._begin(request, plan, current)
            if self._ahead is not None:
                self._ahead.passed()

    def _watch(self, event: ev.Event) -> None:
        """The session's events pass here first: a passing first test run of the files the
        prepared step is built on starts its model call (beside the rest of those runs)."""
        self._emit(event)
        ahead = self._ahead
        if ahead is None or getattr(event, "step", None) != ahead.base_step:
            return
        if isinstance(event, ev.AttemptStarted) and event.attempt > 0:
            ahead.base_changed = True  # a fix follows: it is built on the failing files
        elif isinstance(event, ev.TestsFinished) and event.ok and event.scope != "before":
            if not ahead.base_changed:
                ahead.base_started.set()

    async def _begin(self, request: str, plan: Sequence[Step], current: Step) -> None:
        if not self.enabled:
            return
        step = next_candidate(plan, current)
        if step is None:
            return
        # Awaited here, not in the task: it stages the session's shadow, whose index the
        # foreground's own test selection uses next.
        base, tree = await asyncio.to_thread(pending_commit, self.rt.shadow)
        ahead = _Ahead(step, _Held(self.rt.emit), tree, base, request, list(plan), current)
        for text in self._kept.pop(step.index, []):
            ahead.messages.append(text)
            ahead.inbox.put_nowait(text)
        self._launch(ahead)

    def _launch(self, ahead: _Ahead) -> None:
        self._count += 1
        ahead.task = asyncio.create_task(self._prepare(ahead, self._count))
        self._ahead = ahead

    def chat(self, text: str) -> bool:
        """A chat message as it is sent: True when it names the step prepared ahead, which then
        takes it (prepared again with it if its model was asked already); False: it is the
        current step's, and the prepared step is not touched."""
        ahead = self._ahead
        if ahead is None or ahead.task is None or ahead.held.live:
            return False
        if not about_step_ahead(text, ahead.current, ahead.step):
            return False
        ahead.messages.append(text)
        if not ahead.asked and not ahead.task.done():
            ahead.inbox.put_nowait(text)  # goes with its call, not made yet
            return True
        # Prepared again at once; the old preparation is dropped meanwhile (nothing waits).
        again = ahead.again()
        ahead.messages = []  # the new one's now: not given back when the old one is dropped
        self._launch(again)
        dropping = asyncio.create_task(self._discard(ahead, said=False))
        self._dropping.add(dropping)
        dropping.add_done_callback(self._dropping.discard)
        self.rt.emit(ev.NextStepRestarted(step=ahead.step.index, message=text))
        return True

    @property
    def messages(self) -> list[str]:
        """Chat messages for a step not reached yet: the step prepared ahead took them."""
        ahead = list(self._ahead.messages) if self._ahead is not None else []
        return ahead + [text for texts in self._kept.values() for text in texts]

    def _give_back(self, index: int | None = None) -> None:
        """Messages kept for step `index` (None: every step) go to the session's queue: with
        that step's own call (its turn came without a preparation), or to be said unsent."""
        for key in [index] if index is not None else list(self._kept):
            for text in self._kept.pop(key, []):  # type: ignore[arg-type]
                put_back(self.rt.inbox, text)

    async def _prepare(self, ahead: _Ahead, count: int) -> Proposal:
        name = f"{self.session_id}-next{count}"
        spare, self._spare = self._spare, None
        # To its end even when dropped meanwhile, and kept: drop() then removes it.
        await to_the_end(
            asyncio.to_thread(stacked_shadow, self.rt.shadow, name, ahead.base, spare),
            keep=lambda shadow: setattr(ahead, "shadow", shadow),
        )
        # Its own shadow, events held back, an inbox of its own; the test selection's data is
        # shared (and its check for testmon: one per session), but it never collects (see the
        # module docstring).
        if self.rt.selection is not None and self.rt.selection.worth_narrowing():
            start_probe(self.rt, self.rt.selection)  # before the copy, which then shares it
        selection = self.rt.selection and replace(self.rt.selection, collect=False)
        shared = {f.name: getattr(self.rt, f.name) for f in fields(Runtime)}
        rt = _AheadRuntime(
            **{**shared, "shadow": ahead.shadow, "emit": ahead.held, "inbox": ahead.inbox,
               "delivered": 0, "selection": selection, "review_notes": []},
            base_passed=ahead.base_passed,
        )  # fmt: skip
        ahead.rt = rt
        await ahead.base_started.wait()  # no model call on a base whose tests did not pass
        try:
            # A copy: the plan's own step keeps its status ("pending") until its turn.
            proposal = await propose_step(rt, ahead.request, ahead.plan, copy.copy(ahead.step))
        except Exception as err:
            # Quietly, once: the step is proposed as usual when its turn comes (or now).
            self.rt.emit(ev.Notice(message=_not_prepared(ahead, err)))
            raise
        self.rt.emit(ev.NextStepPrepared(step=ahead.step.index, ready=True))
        return proposal

    async def decided(self, kind: str) -> None:
        """The step under review was decided (an accept is already committed): keep the
        prepared step only on accept, and wait for nothing here: it is awaited when its turn
        comes (`take`)."""
        if kind != "accept":
            await self.drop()
        if kind == "edit_plan":  # the steps they named are renumbered or gone
            self._give_back()

    async def take(self, step: Step) -> Proposal | None:
        """The prepared proposal for `step`, moved into the session's shadow; None when there is
        none (or it cannot be used), and the step is proposed as usual (with the messages that
        named it)."""
        proposal = await self._take(step)
        if proposal is None:
            self._give_back(step.index)
        return proposal

    async def _take(self, step: Step) -> Proposal | None:
        ahead = self._ahead
        if ahead is None or ahead.task is None or ahead.step is not step:
            await self.drop()
            return None
        if self._stale(ahead) or _failed(ahead.task):  # a failure was noted already
            await self.drop()
            return None
        # Its turn: still at work (a slow model, its own fix loop), it is shown as it goes.
        ahead.held.show()
        self.rt.emit_usage()  # the ledger's totals, its calls included
        try:
            proposal = await ahead.task
        except Exception:  # noqa: BLE001 - a failed preparation is redone in the foreground
            proposal = None
        if proposal is None or self._stale(ahead) or ahead.shadow is None:
            await self.drop()
            return None
        await asyncio.to_thread(transplant, ahead.shadow, self.rt.shadow)
        # Its work is done (nothing of it still runs, unlike a dropped one's): kept for the next.
        self._ahead = None
        if self._spare is None:
            self._spare = ahead.shadow
        else:
            await asyncio.to_thread(ahead.shadow.remove)
        proposal.step = step
        step.status = "review"
        return proposal

    def _stale(self, ahead: _Ahead) -> bool:
        """A review's notes for the model wait (hunks dropped, a hand edit, comments): it was
        prepared without them. (A chat message is not: one that names it went to it.)"""
        return bool(self.rt.review_notes)

    async def drop(self) -> None:
        """Discard the prepared (or preparing) step and its shadow."""
        ahead = self._ahead
        if ahead is None or ahead.task is None:
            return
        self._ahead = None  # a message sent meanwhile is the session's
        await self._discard(ahead)

    async def _discard(self, ahead: _Ahead, *, said: bool = True) -> None:
        """Stop `ahead` and remove its shadow; the messages it had are kept for the step they
        named (its work is thrown away: they go with that step's next preparation or call)."""
        task = ahead.task
        assert task is not None
        if not task.done():
            task.cancel()
        try:
            # Not `await task`: that would swallow a cancellation of the session itself (a
            # quit during this drop), and the session would go on preparing the next step.
            await settle(task)
        finally:
            if said and not task.cancelled() and task.exception() is None:
                self.rt.emit(ev.NextStepPrepared(step=ahead.step.index, ready=False))
            # Kept for the step they named (not a restart's: those went on with it).
            if ahead.messages:
                self._kept.setdefault(ahead.step.index, []).extend(ahead.messages)
            ahead.messages = []
            if ahead.shadow is not None:
                await to_the_end(asyncio.to_thread(ahead.shadow.remove))

    async def close(self) -> None:
        """At the session's end: drop the prepared step (and those a restart dropped), remove
        the spare shadow."""
        await self.drop()
        while self._dropping:
            await to_the_end(asyncio.wait(set(self._dropping)))
        self._give_back()  # never reached: said unsent (engine/session.py)
        spare, self._spare = self._spare, None
        if spare is not None:
            await asyncio.to_thread(spare.remove)
