"""`tui-engineer runs`: a table of the recorded sessions of a repo."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.llm.usage import format_cost
from tui_engineer.records.recorder import read_record, resumable, runs_dir


@dataclass
class RunSummary:
    session_id: str
    started: str
    request: str
    accepted: int  # committed and still in the history (undone ones are not counted)
    undone: int
    verdict: str
    cost: str
    outcome: str
    unverified: bool = False  # the session ran without a test command (--unverified)
    resumable: bool = False  # stopped before the user said done: `--resume` goes on with it


def _verdict(event: dict[str, object] | None) -> str:
    if event is None:
        return "-"
    for word in ("perfect", "worked", "ran"):
        if event.get(word):
            return word
    return "failed"


def summarize(path: Path) -> RunSummary:
    events = read_record(path)
    by_type: dict[str, dict[str, object]] = {}
    committed = undone = 0
    for event in events:
        kind = str(event.get("type"))
        by_type.setdefault("first_" + kind, event)
        by_type[kind] = event  # the last of each kind wins
        committed += kind == "step_committed"
        undone += kind == "step_undone"
        if kind == "session_resumed":  # a new run of it: how it ends is still to come
            by_type.pop("session_finished", None)
    started = by_type.get("first_session_started", {})
    when = started.get("at")
    stamp = (
        dt.datetime.fromtimestamp(float(when)).strftime("%Y-%m-%d %H:%M")  # type: ignore[arg-type]
        if when
        else "?"
    )
    usage = by_type.get("usage")
    usd = usage.get("usd") if usage else None
    cost = "-" if usage is None else format_cost(None if usd is None else float(usd))  # type: ignore[arg-type]
    finished = by_type.get("session_finished")
    outcome = str(finished.get("outcome")) if finished else "crashed?"
    return RunSummary(
        session_id=path.stem,
        started=stamp,
        request=str(started.get("request", ""))[:60],
        accepted=committed - undone,
        undone=undone,
        verdict=_verdict(by_type.get("verdict")),
        cost=cost,
        outcome=outcome,
        unverified=started.get("test_command") == "",
        resumable=bool(started) and resumable(outcome),
    )


def list_runs(root: Path) -> list[RunSummary]:
    folder = runs_dir(root)
    if not folder.is_dir():
        return []
    return [summarize(p) for p in sorted(folder.glob("*.jsonl"))]


def _steps(run: RunSummary) -> str:
    notes = []
    if run.undone:
        notes.append(f"{run.undone} undone")
    if run.unverified:
        notes.append("unverified")
    return f"{run.accepted} ({', '.join(notes)})" if notes else str(run.accepted)


def format_runs(runs: list[RunSummary]) -> str:
    if not runs:
        return "No recorded sessions in this repository yet."
    header = (
        f"{'session':<24} {'started':<16} {'steps':<14} {'outcome':<9} {'resumable':<9} "
        f"{'verdict':<8} {'cost':>9}  request"
    )
    rows = [
        f"{r.session_id:<24} {r.started:<16} {_steps(r):<14} {r.outcome:<9} "
        f"{'yes' if r.resumable else 'no':<9} {r.verdict:<8} {r.cost:>9}  {r.request}"
        for r in runs
    ]
    lines = [header, *rows]
    if any(r.resumable for r in runs):
        lines.append(
            "\nGo on with the last stopped session: tui-engineer --resume (headless: tui-engineer "
            "run --resume); another one: --resume SESSION."
        )
    return "\n".join(lines)
