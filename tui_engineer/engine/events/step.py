"""A step's work between its proposal and its review: edits applied or refused, tool calls,
actions, fix attempts, diagnoses, being stuck."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tui_engineer.engine.events.base import Event


@dataclass(frozen=True)
class EditsApplied(Event):
    type: ClassVar[str] = "edits_applied"
    step: int
    attempt: int
    changed: tuple[str, ...]
    diff: str = ""  # the step's whole diff so far, so a UI can show work in progress
    # The reply's shape (edits/shapes.py): its kinds of edit, and how it departs from the
    # canonical layout; a bench counts them per model.
    shape: str = ""
    shape_details: tuple[str, ...] = ()


@dataclass(frozen=True)
class EditRefused(Event):
    type: ClassVar[str] = "edit_refused"
    step: int
    attempt: int
    reason: str
    shape: str = ""  # as in EditsApplied
    shape_details: tuple[str, ...] = ()


@dataclass(frozen=True)
class ShowRequested(Event):
    """The model asked to see more of the repository (SHOW lines, docs/protocol.md) and was
    answered: one event per round."""

    type: ClassVar[str] = "show_requested"
    step: int
    attempt: int
    round: int  # 1..max_rounds, counted per reply
    max_rounds: int
    asked: tuple[str, ...]  # as asked, tidied: "more.py:4980-5060", "more.py::chunked"
    shown: tuple[str, ...]  # what was shown, with the real line ranges
    refused: tuple[str, ...]  # one reason per request not shown
    lines: int  # lines shown in all


@dataclass(frozen=True)
class ToolCallStarted(Event):
    """The model called a tool of one of the session's MCP servers before its reply
    (engine/tool_use.py): `call_id` is unique within the session."""

    type: ClassVar[str] = "tool_call_started"
    call_id: str
    server: str
    tool: str
    arguments: str  # as the model wrote them (JSON)
    purpose: str  # the model call it is part of: plan, propose, diagnose, fix…
    step: int | None
    kind: str = "other"  # read | fetch | other (ACP's tool kinds)


@dataclass(frozen=True)
class ToolCallFinished(Event):
    """A tool call's result, as the model got it (cut to the output bound): `ok` False when
    the tool failed, hung past its time or its server is gone."""

    type: ClassVar[str] = "tool_call_finished"
    call_id: str
    server: str
    tool: str
    arguments: str
    ok: bool
    result: str
    seconds: float
    purpose: str
    step: int | None


@dataclass(frozen=True)
class ActionApplied(Event):
    """A sandbox action (install a package, run a setup command) asked for by the model."""

    type: ClassVar[str] = "action_applied"
    step: int
    attempt: int
    action: str
    ok: bool
    summary: str


@dataclass(frozen=True)
class AttemptStarted(Event):
    type: ClassVar[str] = "attempt_started"
    step: int
    attempt: int  # 0 = the first proposal, 1..N = fixes
    max_attempts: int


@dataclass(frozen=True)
class Diagnosis(Event):
    type: ClassVar[str] = "diagnosis"
    step: int
    attempt: int
    text: str


@dataclass(frozen=True)
class Stuck(Event):
    type: ClassVar[str] = "stuck"
    step: int
    reason: str
