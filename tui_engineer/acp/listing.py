"""`session/list`: the editor sessions recorded in a repository (`.tui-engineer/runs/`), newest
first, each named by its first request, so an editor's thread history can offer them to
`session/load`. A later request of an editor session (its record `part_of` the first) is not a
session of its own: it makes that session's last activity newer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from acp.schema import SessionInfo

from tui_engineer.acp.updates import titled
from tui_engineer.engine import events as ev
from tui_engineer.records.events_read import event_from_dict
from tui_engineer.records.recorder import runs_dir
from tui_engineer.session.repository import repo_root


@dataclass
class _Found:
    session_id: str
    request: str
    updated: float


def recorded_sessions(cwd: str) -> list[SessionInfo]:
    """The editor sessions recorded in the repository at `cwd`, newest activity first (none
    outside a repository)."""
    try:
        root = repo_root(Path(cwd))
    except Exception:  # noqa: BLE001 - not a repository: nothing recorded there
        return []
    folder = runs_dir(root)
    found: dict[str, _Found] = {}
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        started = _started(path)
        if started is None:
            continue
        mtime = path.stat().st_mtime
        if started.part_of in found:
            parent = found[started.part_of]
            parent.updated = max(parent.updated, mtime)
        elif not started.part_of:
            found[path.stem] = _Found(path.stem, started.request, mtime)
    newest = sorted(found.values(), key=lambda f: f.updated, reverse=True)
    return [
        SessionInfo(
            session_id=f.session_id,
            cwd=str(root),
            title=titled(f.request).title,
            updated_at=datetime.fromtimestamp(f.updated, UTC).isoformat(),
        )
        for f in newest
    ]


def _started(path: Path) -> ev.SessionStarted | None:
    """A record's session_started event, read up to that line only."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"session_started"' in line:
                try:
                    event = event_from_dict(json.loads(line))
                except ValueError:  # a torn line
                    return None
                return event if isinstance(event, ev.SessionStarted) else None
    return None
