"""Steps prepared ahead, side by side with the one under review."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


@dataclass(frozen=True)
class StepPreparing(Event):
    """A later step is being prepared beside the one worked on (engine/ahead/pipeline.py): its
    dependencies are in, or are the step under review; a NextStepPrepared follows."""

    type: ClassVar[str] = "step_preparing"
    step: int


@dataclass(frozen=True)
class NextStepPrepared(Event):
    """The next step was prepared while this one awaited review (ready=True), or that prepared
    proposal was dropped (ready=False: this one was not accepted)."""

    type: ClassVar[str] = "next_step_prepared"
    step: int
    ready: bool


@dataclass(frozen=True)
class NextStepRestarted(Event):
    """A chat message named the step prepared ahead after its model was asked: that step is
    prepared again at once, with the message (engine/reviews/chat_target.py says which step a
    message
    concerns)."""

    type: ClassVar[str] = "next_step_restarted"
    step: int
    message: str
