"""Prepare later steps while the human reviews this one: side by side, in plan order.

Every pending step whose dependencies (engine/plans/step_graph.py) are accepted, or are the step
worked on, is prepared at once, up to `parallel_steps`, each in a shadow worktree of its own with
its own fix loop; their model calls run concurrently and their test runs share the cores through
the session's one queue (engine/ahead/test_queue.py). A step that waits only for steps accepted
(or skipped) already starts as the step worked on, k, is proposed, on the accepted files
(`start_beside`); one that waits for k starts as soon as k's first edits are written (while
k's own tests still run), on k's proposal as it is then.
Such a preparation's model is asked only once k's tests passed on those files (DESIGN.md
invariant 8: never built on a failing base): as soon as k's first run passes (its affected tests,
while its full suite still runs), or when k reaches review with those files and passing tests. A
diagnosis or fix of its own waits until k passed all its tests. When k's files change before its
model was asked (a fix), it is dropped and begun again on the proposal that reaches review; when
k's tests fail, none is begun.

Reviewed one at a time, in plan order, and stacked honestly: a prepared step whose base is not
what it lands on (a fix, a hand edit, hunks left out, an earlier step accepted or rejected since)
is moved onto those files with a three-way merge (engine/ahead/restacking.py) and tested again
there, the affected tests then the full suite, before it is shown: the step reviewed next is
moved onto the proposal under review while the human reads it (so that an accept of it as it is
shows that step at once), and again at its turn if what it lands on changed meanwhile. A conflict,
or tests that fail there, make it be proposed again (said).

It is invisible until its turn. Its model calls go through the same model and ledger, so the
budgets count them; the record sees each finished call at once (a ModelExchange marked
`background`, which no UI treats as the reply on screen); its live token counts are not shown
(the status bar's counter is the step under review's, and never goes backwards); its other
events are held back and shown when the step's turn comes (and from then on as they happen: a
slow model or its own fix loop still at work shows live). A failed preparation is noted once,
quietly, and the step is proposed as usual in its turn.

A chat message is the step under review's (it goes with that step's next model call, and the
prepared step is not touched), unless it names the step prepared ahead
(engine/reviews/chat_target.py): then it goes to that step as it is sent. Before that step's
model call it simply goes with the call; after, the step is prepared again at once with it
(said: NextStepRestarted), so an accept never waits for a call made then. When that preparation
is dropped, the message is kept for the step it named: its next preparation, or its own call
when its turn comes.
Once a prepared step is taken, its shadow is kept and reset to the next base for the step after
(a few files differ), instead of a new checkout of every file.

The prepared step tests like any step (affected tests first, engine/steps/verification.py) with the
session's selection data, but never runs the suite collecting coverage (2–3× slower than a plain
run, and meanwhile k's own runs may collect): where it would, it runs the plain suite instead.

- accept k → k is committed first, at once (nothing waits for the prepared steps); each is
  then moved onto the new commit when needed and reviewed when ready (committed on top of k's
  commit, like any step);
- reject / skip of k → the prepared steps that depend on k are dropped (proposed again when
  their turn comes); the others are kept and moved onto what they land on;
- stop / plan edit / undo → every one is dropped;
- a review's notes for the model (hunks dropped, a hand edit, line comments:
  engine/reviews/pair_review.py) → the prepared steps were made without them: the notes go with the
  next model call.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Sequence

from tui_engineer.engine import events as ev
from tui_engineer.engine.ahead.prepared import (
    Ahead,
    Held,
    not_prepared,
    prepare_failed,
    ready_steps,
    runtime_ahead,
)
from tui_engineer.engine.ahead.restacking import move_early, restacked
from tui_engineer.engine.ahead.stacked import (
    base_tree,
    pending_commit,
    stacked_shadow,
    transplant,
)
from tui_engineer.engine.cleanup import settle, to_the_end
from tui_engineer.engine.inbox import put_back
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.plans.step_graph import dependencies
from tui_engineer.engine.reviews.chat_target import about_step_ahead
from tui_engineer.engine.reviews.review import Proposal
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.step_runner import propose_step
from tui_engineer.engine.steps.verification import start_probe
from tui_engineer.vcs.shadow import Shadow


class Pipeline:
    """Up to `parallel_steps` later steps prepared beside the one worked on, each in a shadow
    of its own; reviewed one at a time, in plan order."""

    def __init__(self, rt: Runtime, session_id: str, *, enabled: bool = True) -> None:
        self.rt = rt
        self.session_id = session_id
        self.enabled = enabled
        self.limit = max(1, rt.options.parallel_steps)
        self._ahead: dict[int, Ahead] = {}  # step index -> its preparation
        if enabled:  # it follows the step under review's test runs and fixes
            self._emit, rt.emit = rt.emit, self._watch
        self._current: Step | None = None  # the step worked on or under review
        self._spare: Shadow | None = None  # a taken step's shadow, reused for the next one
        self._count = 0
        self._dropping: set[asyncio.Task[None]] = set()  # preparations dropped by a restart
        self._beginning = asyncio.Lock()  # one `_begin` at a time: no step prepared twice
        # Chat messages that named a step whose preparation was dropped: they go to its next
        # preparation, or with its own call when its turn comes.
        self._kept: dict[int, list[str]] = {}

    @property
    def preparing(self) -> list[int]:
        """The steps being prepared (or prepared), in plan order."""
        return sorted(self._ahead)

    async def start_beside(self, request: str, plan: Sequence[Step], current: Step) -> None:
        """Called as `current` is about to be proposed (its shadow holds the accepted files):
        the steps that do not wait for it are prepared at once, on those files, beside its
        model call; each is moved onto `current`'s proposal later (`start`)."""
        self._current = current
        await self._begin(request, plan, current, beside=True)

    async def start_early(self, request: str, plan: Sequence[Step], current: Step) -> None:
        """Called when `current`'s first edits are written, before its tests run: the shadows
        are made now; the models are asked once they passed (`start`)."""
        self._current = current
        await self._begin(request, plan, current)

    async def start(
        self, request: str, plan: Sequence[Step], current: Step, *, passed: bool = True
    ) -> None:
        """Called when `current`'s proposal goes to review: preparations begun on the same
        files go on; one whose model was not asked yet is begun again on these files; one whose
        model was asked is kept, and moved onto the files it lands on before it is shown
        (`_restack`). Free places are filled with the steps now ready, unless its tests failed
        (`passed` False)."""
        self._current = current
        now = await asyncio.to_thread(self.rt.shadow.step_tree)  # a test run may write
        for ahead in list(self._ahead.values()):
            assert ahead.task is not None
            if ahead.tree != now and not ahead.asked and not ahead.task.done():
                await self._drop_one(ahead)
            elif passed:
                ahead.passed()
        if passed:
            await self._begin(request, plan, current)
            for ahead in self._ahead.values():
                if ahead.tree == now:
                    ahead.passed()
            await self._restack_next(plan, current, now)

    async def _restack_next(self, plan: Sequence[Step], current: Step, tree: str) -> None:
        """The step reviewed after `current`, prepared on other files: moved onto `current`'s
        proposal now (restacking.py)."""
        after = next((s for s in plan if s.status == "pending" and s is not current), None)
        ahead = self._ahead.get(after.index) if after is not None else None
        if ahead is not None:
            await move_early(self.rt, ahead, tree)

    def _watch(self, event: ev.Event) -> None:
        """The session's events pass here first: a passing first test run of the files a
        prepared step is built on starts its model call (beside the rest of those runs)."""
        self._emit(event)
        step = getattr(event, "step", None)
        for ahead in self._ahead.values():
            if ahead.base_step != step:
                continue
            if isinstance(event, ev.AttemptStarted) and event.attempt > 0:
                ahead.base_changed = True  # a fix follows: it is built on the failing files
            elif isinstance(event, ev.TestsFinished) and event.ok and event.scope != "before":
                if not ahead.base_changed:
                    ahead.base_started.set()

    async def _begin(
        self, request: str, plan: Sequence[Step], current: Step, *, beside: bool = False
    ) -> None:
        if not self.enabled:
            return
        async with self._beginning:
            free = self.limit - len(self._ahead)
            steps = ready_steps(plan, current, set(self._ahead), beside=beside)[: max(0, free)]
            if not steps:
                return
            if beside:  # the accepted files: they passed, and nothing is staged for them
                base = self.rt.shadow.baseline
                tree = await asyncio.to_thread(base_tree, self.rt.shadow)
            else:
                # Awaited here, not in the task: it stages the session's shadow, whose index
                # the foreground's own test selection uses next.
                base, tree = await asyncio.to_thread(pending_commit, self.rt.shadow)
            for step in steps:
                ahead = Ahead(step, Held(self.rt.emit), tree, base, request, list(plan), current)
                if beside:
                    ahead.passed()
                for text in self._kept.pop(step.index, []):
                    ahead.messages.append(text)
                    ahead.inbox.put_nowait(text)
                self._launch(ahead)
                self.rt.emit(ev.StepPreparing(step=step.index))

    def _launch(self, ahead: Ahead) -> None:
        self._count += 1
        ahead.task = asyncio.create_task(self._prepare(ahead, self._count))
        self._ahead[ahead.step.index] = ahead

    def chat(self, text: str) -> bool:
        """A chat message as it is sent: True when it names a step prepared ahead, which then
        takes it (prepared again with it if its model was asked already); False: it is the
        current step's, and the prepared steps are not touched."""
        ahead = next(
            (
                a for _, a in sorted(self._ahead.items())
                if a.task is not None and not a.held.live
                and about_step_ahead(text, a.current, a.step)
            ),
            None,
        )  # fmt: skip
        if ahead is None or ahead.task is None:
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
        """Chat messages for a step not reached yet: the steps prepared ahead took them."""
        ahead = [text for _, a in sorted(self._ahead.items()) for text in a.messages]
        return ahead + [text for texts in self._kept.values() for text in texts]

    def _give_back(self, index: int | None = None) -> None:
        """Messages kept for step `index` (None: every step) go to the session's queue: with
        that step's own call (its turn came without a preparation), or to be said unsent."""
        for key in [index] if index is not None else list(self._kept):
            for text in self._kept.pop(key, []):  # type: ignore[arg-type]
                put_back(self.rt.inbox, text)

    async def _prepare(self, ahead: Ahead, count: int) -> Proposal:
        name = f"{self.session_id}-next{count}"
        spare, self._spare = self._spare, None
        # To its end even when dropped meanwhile, and kept: drop() then removes it.
        await to_the_end(
            asyncio.to_thread(stacked_shadow, self.rt.shadow, name, ahead.base, spare),
            keep=lambda shadow: setattr(ahead, "shadow", shadow),
        )
        if self.rt.selection is not None and self.rt.selection.worth_narrowing():
            start_probe(self.rt, self.rt.selection)  # before the copy, which then shares it
        ahead.rt = rt = runtime_ahead(self.rt, ahead)
        await ahead.base_started.wait()  # no model call on a base whose tests did not pass
        # Calls in flight side by side hold their share of the budgets until their usage is
        # in (llm/accounting.py `reserve`: the model, and so its ledger, is the session's).
        try:
            # A copy: the plan's own step keeps its status ("pending") until its turn.
            proposal = await propose_step(rt, ahead.request, ahead.plan, copy.copy(ahead.step))
        except Exception as err:
            # Quietly, once: the step is proposed as usual when its turn comes (or now).
            self.rt.emit(ev.Notice(message=not_prepared(ahead, err)))
            raise
        self.rt.emit(ev.NextStepPrepared(step=ahead.step.index, ready=True))
        return proposal

    async def decided(self, kind: str) -> None:
        """The step under review was decided (an accept is already committed): an accept keeps
        every preparation; a reject or skip drops those that depend on the step (the others
        are moved onto the files they land on when their turn comes); anything else drops all.
        Nothing waits here for a preparation: it is awaited when its turn comes (`take`)."""
        current = self._current
        if kind == "accept":
            return
        if kind in ("reject", "skip") and current is not None:
            for ahead in list(self._ahead.values()):
                if current.index in dependencies(ahead.plan).get(ahead.step.index, ()):
                    await self._drop_one(ahead, gone=True)
            return
        await self.drop(gone=True)
        if kind == "edit_plan":  # the steps they named are renumbered or gone
            self._give_back()

    async def drop_step(self, index: int) -> None:
        """A step that will not be reviewed (the plan check found it no longer needed, and
        the human or "auto" dropped it): its preparation goes, and frees its place."""
        ahead = self._ahead.get(index)
        if ahead is not None and ahead.task is not None:
            await self._drop_one(ahead, gone=True)

    async def base_changes(self) -> None:
        """The proposal under review is about to change (a hand edit, hunks left out): a
        preparation whose model was not asked yet is dropped (begun again on the new files at
        `start`); the others are kept and moved onto the new files before they are shown."""
        for ahead in list(self._ahead.values()):
            assert ahead.task is not None
            if not ahead.asked and not ahead.task.done():
                await self._drop_one(ahead)

    async def take(self, step: Step) -> Proposal | None:
        """The prepared proposal for `step`, moved into the session's shadow; None when there is
        none (or it cannot be used), and the step is proposed as usual (with the messages that
        named it)."""
        proposal = await self._take(step)
        if proposal is None:
            self._give_back(step.index)
        return proposal

    async def _take(self, step: Step) -> Proposal | None:
        ahead = self._ahead.pop(step.index, None)
        if ahead is None or ahead.task is None:
            return None
        if ahead.step is not step or prepare_failed(ahead.task):  # a failure was noted already
            await self._discard(ahead)
            return None
        # Its turn: what it lands on is in. Still at work (a slow model, its own fix loop, a
        # move onto new files), it is shown as it goes.
        ahead.passed()
        ahead.held.show()
        if ahead.rt is not None:
            ahead.rt.next_up = True
        self.rt.emit_usage()  # the ledger's totals, its calls included
        try:
            proposal: Proposal | None = await ahead.task
            landing = await asyncio.to_thread(base_tree, self.rt.shadow)
            if proposal is not None and ahead.tree != landing:
                base = self.rt.shadow.baseline
                proposal = await restacked(self.rt, ahead, proposal, base, landing)
        except Exception:  # noqa: BLE001 - a failed preparation is redone in the foreground
            proposal = None
        if proposal is None or ahead.shadow is None:
            await self._discard(ahead, said=False)
            return None
        await asyncio.to_thread(transplant, ahead.shadow, self.rt.shadow)
        # Its work is done (nothing of it still runs, unlike a dropped one's): kept for the next.
        if self._spare is None:
            self._spare = ahead.shadow
        else:
            await asyncio.to_thread(ahead.shadow.remove)
        proposal.step = step
        step.status = "review"
        return proposal

    async def drop(self, *, gone: bool = False) -> None:
        """Discard every prepared (or preparing) step and its shadow."""
        for ahead in list(self._ahead.values()):
            await self._drop_one(ahead, gone=gone)

    async def _drop_one(self, ahead: Ahead, *, gone: bool = False) -> None:
        """Discard one preparation (`gone`: for now, not begun again at once: said even
        while it was still preparing)."""
        if self._ahead.get(ahead.step.index) is ahead:
            del self._ahead[ahead.step.index]  # a message sent meanwhile is the session's
        if ahead.task is not None:
            await self._discard(ahead, gone=gone)

    async def _discard(self, ahead: Ahead, *, said: bool = True, gone: bool = False) -> None:
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
            elif gone and task.cancelled():  # dropped while preparing, not begun again
                self.rt.emit(ev.NextStepPrepared(step=ahead.step.index, ready=False))
            # Kept for the step they named (not a restart's: those went on with it).
            if ahead.messages:
                self._kept.setdefault(ahead.step.index, []).extend(ahead.messages)
            ahead.messages = []
            if ahead.shadow is not None:
                await to_the_end(asyncio.to_thread(ahead.shadow.remove))

    async def close(self) -> None:
        """At the session's end: drop the prepared steps (and those a restart dropped), remove
        the spare shadow."""
        await self.drop()
        while self._dropping:
            await to_the_end(asyncio.wait(set(self._dropping)))
        self._give_back()  # never reached: said unsent (engine/session.py)
        spare, self._spare = self._spare, None
        if spare is not None:
            await asyncio.to_thread(spare.remove)
