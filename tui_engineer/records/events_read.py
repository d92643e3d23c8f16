"""A run record's lines back as typed engine events (engine/events/), in order.

What a front end replays to show a session it did not see live (a resumed session's chat and
plan, an editor's `session/load`) goes through the same handlers as live events. A line of a
type this version does not know, or missing a field it needs, is skipped: records outlive
versions."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

from tui_engineer.engine import events as ev
from tui_engineer.records.recorder import read_record


def _event_classes() -> dict[str, type[ev.Event]]:
    found: dict[str, type[ev.Event]] = {}
    stack = list(ev.Event.__subclasses__())
    while stack:
        cls = stack.pop()
        found[cls.type] = cls
        stack.extend(cls.__subclasses__())
    return found


_CLASSES = _event_classes()


def _tupled(value: object) -> object:
    """JSON made tuples lists; the events hold tuples (of tuples, for failures and changes)."""
    if isinstance(value, list):
        return tuple(_tupled(v) for v in value)
    return value


def _step_info(raw: object) -> ev.StepInfo:
    data = dict(raw) if isinstance(raw, dict) else {}
    names = {f.name for f in dataclasses.fields(ev.StepInfo)}
    return ev.StepInfo(**{k: _tupled(v) for k, v in data.items() if k in names})


def event_from_dict(data: dict[str, Any]) -> ev.Event | None:
    """The event a record line holds; None when it cannot be read as one."""
    cls = _CLASSES.get(str(data.get("type")))
    if cls is None:
        return None
    hints = typing.get_type_hints(cls)
    values: dict[str, object] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "messages" and isinstance(value, list):  # dicts stay dicts
            values[f.name] = tuple(value)
        elif f.name == "steps" and "StepInfo" in str(hints.get(f.name)):
            values[f.name] = tuple(_step_info(s) for s in value or ())
        else:
            values[f.name] = _tupled(value)
    try:
        return cls(**values)  # type: ignore[arg-type]
    except TypeError:  # a field it needs is missing (a line of another version)
        return None


def events_from_record(path: Path) -> list[ev.Event]:
    """Every event of a record that this version can read, typed, in order."""
    events = (event_from_dict(raw) for raw in read_record(path))
    return [e for e in events if e is not None]
