"""Engine events as Textual messages, one message class per event class, so that each pane
handles the events that change what it owns with `@on(heard(ev.X))` (dispatched by class, as
Textual dispatches any message) instead of a method the app looks up by the event's name.

The app hears each engine event once, in the order the engine emitted it, and delivers its
message to the panes in a fixed order (`deliver`): plan, diff, tests, chat, then the app
itself (status bar, focus, notifications). One event's effects therefore all land before the
next event's, as when one handler did them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, TypeVar

from textual.message import Message
from textual.message_pump import MessagePump

from tui_engineer.engine import events as ev

E = TypeVar("E", bound=ev.Event)


class EngineMessage(Message, Generic[E], bubble=False, namespace="engine"):
    """One engine event. Its subclasses (one per event class, made by `heard`) are what
    handlers name; `event` is the engine's own dataclass."""

    def __init__(self, event: E) -> None:
        super().__init__()
        self.event = event


_CLASSES: dict[type[ev.Event], type[EngineMessage]] = {}  # type: ignore[type-arg]


def heard(event_class: type[E]) -> type[EngineMessage[E]]:
    """The message class for an engine event class (made once): `@on(heard(ev.PlanReady))`.
    Its handler name is `on_engine_<event>`, so it never meets Textual's own handlers."""
    made = _CLASSES.get(event_class)
    if made is None:
        made = type(event_class.__name__, (EngineMessage,), {}, bubble=False, namespace="engine")
        _CLASSES[event_class] = made
    return made


def engine_message(event: E) -> EngineMessage[E]:
    return heard(type(event))(event)


async def deliver(message: EngineMessage[ev.Event], owners: Iterable[MessagePump]) -> None:
    """Run each owner's handlers for this message now, one owner after the other (Textual's
    own dispatch by message class; the message does not bubble). Posting it to each owner's
    queue instead would let the panes show one event's effects out of step with another's."""
    for owner in owners:
        await owner._dispatch_message(message)
