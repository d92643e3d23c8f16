"""Resuming a session from its run record: the record is the session's memory.

`load_run` reads `.tui-engineer/runs/<id>.jsonl` back into what a session needs to go on where
it stopped (its plan with each step's outcome, its commits, the reasons a step was rejected,
chat never delivered, the usage so far) and the whole history as typed events, which a front
end replays to show what happened before (the TUI's panes, an editor's `session/load`).
A session ended by the user saying done has nothing to resume; every other end (Ctrl-C,
quitting, a closed terminal, a budget, kill -9) leaves one that can go on."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import Step
from tui_engineer.records.events_read import event_from_dict, events_from_record
from tui_engineer.records.recorder import resumable, runs_dir

ASSISTED = "Assisted-by: tui-engineer"  # the trailer every accepted step's commit carries

CRASHED = "crashed"  # a record with no end: kill -9, a power cut


class NothingToResume(UserError):
    """The session the user named (or the last one) is finished, or there is none."""


@dataclass
class Resumed:
    """A recorded session, read back to go on with (docs/session.md, "Resuming")."""

    session_id: str
    record: Path
    request: str  # the request the session started with
    plan: list[Step] = field(default_factory=list)  # each with the status it ended with
    commits: list[str] = field(default_factory=list)  # accepted and not undone, in order
    rejections: dict[int, list[str]] = field(default_factory=dict)  # reasons, per step index
    queued: list[str] = field(default_factory=list)  # chat sent but never delivered
    head: str = ""  # the commit the session last stood on ("" when the record does not say)
    part_of: str = ""  # the editor's session it is a later request of (ACP), if any
    outcome: str = CRASHED  # how its last run ended (session_finished), else "crashed"
    usage: tuple[int, int, float | None] = (0, 0, 0.0)  # prompt, completion tokens, usd
    history: list[ev.Event] = field(default_factory=list)  # every recorded event, in order
    # Steps accepted whose commit the record does not hold (kill -9 during the accept: the
    # next start's journal recovery made it); `where_to_go_on` looks for it on the branch.
    accepted_uncommitted: list[int] = field(default_factory=list)
    # Whether the last accepted step's tests passed (a resumed session's final result).
    last_ok: bool = False
    # The proposal under review when it stopped (its tests passed), shown again on resume.
    under_review: ev.ProposalReady | None = None

    @property
    def pending(self) -> Step | None:
        """The step to work next (the one in flight or under review when it stopped)."""
        return next((s for s in self.plan if s.status == "pending"), None)

    @property
    def unfinished(self) -> bool:
        """A step was skipped, failed or undone: the session no longer ends with all in."""
        return any(s.status in {"skipped", "failed", "undone"} for s in self.plan)


def find_record(root: Path, run: str | None = None) -> Path:
    """The record of session `run` (its id, or a record file's path), or the newest one."""
    folder = runs_dir(root)
    if run:
        as_path = Path(run)
        if as_path.suffix == ".jsonl" and as_path.is_file():
            return as_path
        named = folder / f"{Path(run).stem}.jsonl"
        if named.is_file():
            return named
        raise NothingToResume(
            f"No recorded session {run!r} in this repository: `tui-engineer runs` lists them."
        )
    records = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not records:
        raise NothingToResume(
            "Nothing to resume: this repository has no recorded sessions yet "
            "(sessions are recorded in .tui-engineer/runs/ unless --no-record)."
        )
    return records[-1]  # ids start with their start time: the newest sorts last


def load_run(root: Path, run: str | None = None) -> Resumed:
    """Read session `run` (None: the newest of this repository) back to resume it. Raises
    NothingToResume, with the sentence to show, for a finished session or none."""
    path = find_record(root, run)
    history = events_from_record(path)
    started = next((e for e in history if isinstance(e, ev.SessionStarted)), None)
    if started is None:  # a session stopped before it began (killed at launch, say)
        older = _older_stopped(path) if not run else None
        hint = f" The last stopped one is {older}: --resume {older}." if older else ""
        raise NothingToResume(f"The record {path.name} holds no session to resume.{hint}")
    state = Resumed(session_id=path.stem, record=path, request=started.request, history=history)
    state.part_of = started.part_of
    _read_history(state)
    if not resumable(state.outcome):
        older = _older_stopped(path) if not run else None
        hint = f" The last stopped one is {older}: --resume {older}." if older else ""
        raise NothingToResume(
            f"Session {state.session_id} is finished (it ended done{_ended(state)}): it has "
            f"nothing to resume. Start a new session, or see `tui-engineer runs`.{hint}"
        )
    return state


def session_parts(root: Path, session_id: str) -> list[Path]:
    """The run records of an editor's session (ACP), oldest first: its first one (named by
    `session_id`) and those of the later requests made in it (`part_of` it)."""
    first = find_record(root, session_id)
    later = []
    for path in sorted(first.parent.glob("*.jsonl")):
        if path != first and path.name > first.name and _part_of(path) == session_id:
            later.append(path)
    return [first, *later]


def _part_of(path: Path) -> str:
    """The `part_of` of a record's session_started line (read up to that line only)."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"session_started"' in line:
                try:
                    started = event_from_dict(json.loads(line))
                except ValueError:  # a torn line
                    return ""
                return started.part_of if isinstance(started, ev.SessionStarted) else ""
    return ""


def _older_stopped(newest: Path) -> str | None:
    """The newest session before `newest` that can be resumed, to name it."""
    for path in sorted(newest.parent.glob("*.jsonl"), reverse=True):
        if path == newest:
            continue
        events = events_from_record(path)
        ends = [e for e in events if isinstance(e, ev.SessionFinished | ev.SessionResumed)]
        last = ends[-1] if ends else None
        if not isinstance(last, ev.SessionFinished) or resumable(last.outcome):
            if any(isinstance(e, ev.SessionStarted) for e in events):
                return path.stem
    return None


def _ended(state: Resumed) -> str:
    finished = [e for e in state.history if isinstance(e, ev.SessionFinished)]
    return f": {finished[-1].message}" if finished and finished[-1].message else ""


def _read_history(state: Resumed) -> None:
    statuses: dict[int, str] = {}
    last: dict[int, str] = {}  # each step's last decision
    shown: dict[int, ev.ProposalReady] = {}  # proposals no decision answered yet (but stop)
    answered: dict[int, ev.ProposalReady] = {}  # the proposal each step's last decision was on
    commits: dict[int, str] = {}
    delivered: list[str] = []
    queued: list[str] = []
    tokens = [0, 0]
    usd: float | None = 0.0
    for event in state.history:
        match event:
            case ev.SessionStarted(head=head) if head:
                state.head = head
            case ev.PlanReady(steps=steps):
                state.plan = [_step(info, statuses, commits) for info in steps]
            case ev.StepCommitted(step=index, sha=sha):
                statuses[index], commits[index] = "accepted", sha
                state.commits.append(sha)
                state.head = sha
            case ev.StepUndone(step=index) if index is not None:
                sha = commits.pop(index, None)
                if sha in state.commits:
                    state.commits.remove(sha)
                statuses[index] = "undone"
                state.head = state.commits[-1] if state.commits else state.head
            case ev.StepSkipped(step=index) if last.get(index) != "stop":
                statuses[index] = "skipped"
            case ev.ProposalReady(step=index):
                shown[index] = event
            case ev.DecisionMade(step=index, decision=kind, reason=reason):
                last[index] = kind
                if kind != "stop" and index in shown:  # a stop leaves it to be reviewed
                    answered[index] = shown.pop(index)
                _decided(state, statuses, index, kind, reason)
            case ev.AcceptRefused(step=index):  # not committed: still to be reviewed
                last[index] = "refused"
                if index in answered:
                    shown[index] = answered.pop(index)
            case ev.FeedbackDelivered(text=text):
                delivered.append(text)
            case ev.FeedbackPending(texts=texts):
                queued.extend(texts)
            case ev.ModelExchange(prompt_tokens=p, completion_tokens=c, usd=cost):
                tokens[0] += p
                tokens[1] += c
                usd = None if usd is None or cost is None else usd + cost
            case ev.SessionFinished(outcome=outcome):
                state.outcome = outcome
            case ev.SessionResumed():
                state.outcome = CRASHED  # a new run of it: how this one ends is still to come
    for step in state.plan:
        step.status = statuses.get(step.index, "pending")
        step.commit = commits.get(step.index)
    state.accepted_uncommitted = [
        i for i, kind in last.items() if kind == "accept" and i not in statuses
    ]
    state.last_ok = _last_ok(state)
    pending = state.pending
    proposal = shown.get(pending.index) if pending else None
    if pending is not None and pending.index in state.accepted_uncommitted:
        # Accepted, and no commit recorded: the next start made it (adopted), or could not
        # (a hook refused, files edited since): then it is shown again, never asked again.
        proposal = answered.get(pending.index)
    if proposal is not None and (proposal.tests_ok or proposal.unverified):
        state.under_review = proposal  # one that failed gets a new attempt instead
    state.queued = [text for text in queued if text not in delivered]
    state.usage = (tokens[0], tokens[1], usd)


def _last_ok(state: Resumed) -> bool:
    """The last accepted step's tests passed (its last proposal's), or the session has none."""
    accepted = [s.index for s in state.plan if s.status == "accepted"]
    if not accepted:
        return False
    shown = [e for e in state.history if isinstance(e, ev.ProposalReady)]
    last = [e for e in shown if e.step == accepted[-1]]
    return bool(last) and (last[-1].tests_ok or last[-1].unverified)


def _decided(state: Resumed, statuses: dict[int, str], index: int, kind: str, reason: str) -> None:
    if kind == "reject":
        state.rejections.setdefault(index, []).append(reason or "(no reason given)")
    elif kind in {"stop", "undo"}:
        statuses.pop(index, None)  # stopped at (or taken back under) this step: it goes on
    elif kind in {"skip", "edit_plan"}:  # edit_plan: replaced by the steps the human wrote
        statuses[index] = "skipped"


def _step(info: ev.StepInfo, statuses: dict[int, str], commits: dict[int, str]) -> Step:
    return Step.from_info(info, statuses.get(info.index, "pending"), commits.get(info.index))
