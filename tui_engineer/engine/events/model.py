"""Calls to the model: their start, stream, failures and retries, usage, a server's pause, and the
human's words delivered with a call."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


@dataclass(frozen=True)
class ModelCallStarted(Event):
    type: ClassVar[str] = "model_call_started"
    purpose: str  # plan | propose | diagnose | fix | replan | check (the plan check)
    step: int | None
    prompt_tokens: int = 0  # estimated size of the request
    max_output_tokens: int | None = None  # the reply cap sent with it


@dataclass(frozen=True)
class ModelCallFailed(Event):
    """A model call that ended without a usable reply: what was sent, what came back, why."""

    type: ClassVar[str] = "model_call_failed"
    purpose: str
    step: int | None
    prompt_tokens: int  # estimated
    partial_reply: str
    completion_tokens: int  # estimated from the partial reply
    error: str
    stopped: bool = False  # stopped by us: plainly not what was asked (llm/reply_watch.py)
    stop_reason: str = ""  # the watch's reason for a stopped one (a replay stops it alike)


@dataclass(frozen=True)
class ModelRetried(Event):
    """A broken reply (dropped, malformed, error event, empty) was thrown away and asked again."""

    type: ClassVar[str] = "model_retried"
    purpose: str
    reason: str


@dataclass(frozen=True)
class TokenStream(Event):
    type: ClassVar[str] = "token"
    purpose: str
    text: str


@dataclass(frozen=True)
class ModelExchange(Event):
    """A finished model call: the prompt and the reply, for run records and replay."""

    type: ClassVar[str] = "model_exchange"
    purpose: str
    step: int | None
    messages: tuple[dict[str, str], ...]
    reply: str
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    usd: float | None
    estimated: bool = False  # the server reported no usage: counted as chars / 4
    retries: int = 0  # broken replies thrown away before this one
    # A call of the step prepared ahead (engine/ahead/pipeline.py): recorded at once, never shown as
    # the reply on screen.
    background: bool = False


@dataclass(frozen=True)
class UsageUpdated(Event):
    type: ClassVar[str] = "usage"
    prompt_tokens: int
    completion_tokens: int
    usd: float | None  # None: the model's price is unknown
    max_tokens: int | None
    max_usd: float | None
    estimated: bool = False  # some counts are estimates (no usage from the server, or live)


@dataclass(frozen=True)
class FeedbackDelivered(Event):
    type: ClassVar[str] = "feedback_delivered"
    text: str
    purpose: str
    step: int | None = None  # the step whose call took it (None: a plan call)


@dataclass(frozen=True)
class ReviewNotesDelivered(Event):
    """What a review decided for the model (hunks dropped, a hand edit, line comments) went
    with a model call."""

    type: ClassVar[str] = "review_notes_delivered"
    count: int
    purpose: str
    step: int | None = None


@dataclass(frozen=True)
class ServerPaused(Event):
    """The model server stopped answering during a call of the step in hand: the session waits,
    its plan kept, checking every `every` seconds, for at most `wait` seconds (None: until the
    human retries or quits); then the same call is made again."""

    type: ClassVar[str] = "server_paused"
    purpose: str
    step: int | None
    message: str
    wait: float | None
    every: float


@dataclass(frozen=True)
class ServerResumed(Event):
    """The paused call is made again: the server answers (`by` "server") or the human asked
    (`by` "human")."""

    type: ClassVar[str] = "server_resumed"
    purpose: str
    step: int | None
    waited: float
    by: str
