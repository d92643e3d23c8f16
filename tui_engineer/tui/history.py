"""A resumed session's past, shown before it goes on (`tui-engineer --resume`): the request,
the plan, the model's replies, your messages, each step's decision and commit, and where it
stopped, from its run record (session/resume.py). The panes fill as they did live; the
review and the tests of what is under way come from the live events that follow."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from tui_engineer.engine import events as ev

if TYPE_CHECKING:
    from tui_engineer.session.resume import Resumed
    from tui_engineer.tui.app_engine_events import AppEngineEvents
    from tui_engineer.tui.panes.chat import ChatPane
    from tui_engineer.tui.panes.diff_review import ReviewDiffView


class ShowsEvents(Protocol):
    """The app, as far as the history needs it."""

    chat: ChatPane
    diff: ReviewDiffView
    engine_events: AppEngineEvents  # its Files pane's marks

    async def deliver(self, event: ev.Event) -> None: ...


# Events delivered to the panes as live ones are (app.deliver): shown just as they were then.
_AS_LIVE = (
    ev.PlanReady,
    ev.EditsApplied,
    ev.DecisionMade,
    ev.StepCommitted,
    ev.StepSkipped,
    ev.StepUndone,
    ev.Notice,
)


async def show_history(app: ShowsEvents, resumed: Resumed) -> None:
    chat = app.chat
    await chat.note(f"Session {resumed.session_id}, as it went before:")
    await chat.user_message(resumed.request, queued=False)
    model = "model"
    for event in resumed.history:
        if isinstance(event, ev.SessionStarted):
            model = event.model
        elif isinstance(event, ev.ModelExchange) and not event.background:
            await _reply(app, model, event)
        elif isinstance(event, ev.FeedbackDelivered):
            await chat.user_message(event.text, queued=False)
        elif isinstance(event, ev.ErrorEvent | ev.AcceptRefused):  # said, not notified again
            await chat.note(event.message, error=True)
        elif isinstance(event, ev.SessionFinished):
            await chat.note(f"It stopped there ({event.outcome}).")
        elif isinstance(event, _AS_LIVE):
            await app.deliver(event)
    # A step cut off mid-way is proposed again: its old work in progress is not shown as if
    # it were still there.
    app.diff.show_diff("")
    app.diff.border_title = "Diff"
    app.engine_events.mark_changes({})
    for text in resumed.queued:  # sent before it stopped; the next model call takes them
        await chat.user_message(text, queued=True)


async def _reply(app: ShowsEvents, model: str, event: ev.ModelExchange) -> None:
    where = f"step {event.step} · " if event.step is not None else ""
    quiet = "Planning…" if event.purpose == "plan" else ""
    await app.chat.begin_reply(f"{model} — {where}{event.purpose}", quiet=quiet)
    await app.chat.add_text(event.reply)
    await app.chat.end_reply()
