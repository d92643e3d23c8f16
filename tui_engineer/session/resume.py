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
from typing import TYPE_CHECKING

from tui_engineer.engine import events as ev
from tui_engineer.engine.plan import Step
from tui_engineer.errors import UserError
from tui_engineer.records.events_read import event_from_dict, events_from_record
from tui_engineer.records.recorder import resumable, runs_dir
from tui_engineer.vcs.plumbing import git_text, run_git
from tui_engineer.vcs.repo import literal

if TYPE_CHECKING:
    from tui_engineer.engine.session import Session

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
    if started is None:
        raise NothingToResume(f"The record {path.name} holds no session to resume.")
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


@dataclass
class GoingOn:
    """Where a resumed session goes on from, and what to say about it."""

    head: str  # HEAD now
    adopted: list[tuple[Step, str]] = field(default_factory=list)  # (step, its commit)
    shown_again: dict[int, str] = field(default_factory=dict)  # step -> the diff to show again
    sentences: list[str] = field(default_factory=list)


def where_to_go_on(root: Path, state: Resumed, now: str) -> GoingOn:
    """HEAD now; the commits of steps accepted as the session was killed (made by the next
    start's journal recovery, so the record lacks them); and what changed meanwhile: the user
    committed (it goes on on the new HEAD), or a step's commit is gone from the branch.
    `now`: HEAD, as the start-up checks read it."""
    going = GoingOn(now)
    moved = bool(state.head and now and state.head != now)
    if moved and not _is_ancestor(root, state.head, now):
        going.sentences.append(
            f"HEAD is no longer where this session left it ({state.head[:8]}): it goes on "
            f"from HEAD {now[:8]}."
        )
    elif moved:
        new = _commits_between(root, state.head, now)
        going.adopted = _adopt(root, state, new)
        mine = {sha for _, sha in going.adopted}
        theirs = [(sha, subject) for sha, subject, _ in new if sha not in mine]
        if theirs:
            listed = ", ".join(f"{sha[:8]} {subject}" for sha, subject in theirs[-3:])
            more = f"{len(theirs) - 3} more, " if len(theirs) > 3 else ""
            going.sentences.append(
                f"The repository moved on since this session stopped: {len(theirs)} new "
                f"commit(s) ({more}{listed}); it goes on from HEAD {now[:8]}, and the steps "
                "left are worked on top of it."
            )
    review = state.under_review
    adopted = {step.index for step, _ in going.adopted}
    if review is not None and review.step not in adopted:
        if _still_applies(root, state, now, review, going):
            going.shown_again[review.step] = review.diff
    for step in state.plan:
        if step.commit and not _is_ancestor(root, step.commit, now):
            going.sentences.append(
                f"Step {step.index}'s commit {step.commit[:8]} ({step.title}) is no longer on "
                "this branch."
            )
    return going


def _still_applies(
    root: Path, state: Resumed, now: str, review: ev.ProposalReady, going: GoingOn
) -> bool:
    """Whether the proposal under review may be shown again: none of its files changed since
    (else it would be applied blind on files it never saw); said when they did."""
    if not state.head or state.head == now:
        return True
    if not _is_ancestor(root, state.head, now):
        why = "the branch's history changed"
    else:
        paths = literal(path for _, path in review.changes)
        if not paths:
            return True
        changed = git_text(root, "diff", "--name-only", state.head, now, "--", *paths)
        if not changed:
            return True
        why = ", ".join(changed.splitlines())
    going.sentences.append(
        f"Step {review.step}'s files changed since its proposal was shown ({why}): it is "
        "proposed again on the new HEAD rather than applied blind."
    )
    return False


def _is_ancestor(root: Path, old: str, new: str) -> bool:
    return run_git(root, "merge-base", "--is-ancestor", old, new, check=False).returncode == 0


def _commits_between(root: Path, old: str, new: str) -> list[tuple[str, str, str]]:
    """(sha, subject, body) of each commit after `old` up to `new`, oldest first."""
    out = git_text(root, "log", "--reverse", "--format=%H%x00%s%x00%b%x1e", f"{old}..{new}")
    found = []
    for entry in out.split("\x1e"):
        parts = entry.strip("\n").split("\x00")
        if len(parts) == 3:
            found.append((parts[0], parts[1], parts[2]))
    return found


def _adopt(root: Path, state: Resumed, new: list[tuple[str, str, str]]) -> list[tuple[Step, str]]:
    """Steps accepted without a recorded commit, matched to our commits made since: those
    the record says were accepted, and the one under review, when a kill came after its
    decision was on disk and before it was said (the commit then changes only its files)."""
    adopted = []
    review = state.under_review
    candidates = [*state.accepted_uncommitted]
    if review is not None and review.step not in candidates:
        candidates.append(review.step)
    for index in candidates:
        step = next((s for s in state.plan if s.index == index), None)
        match = next(
            (
                sha for sha, subject, body in new
                if step and subject == step.title and ASSISTED in body
            ),
            None,
        )  # fmt: skip
        unsaid = index not in state.accepted_uncommitted
        if unsaid and match is not None and review is not None:
            match = match if _within(root, match, review) else None
        if step is not None and match is not None:
            adopted.append((step, match))
    return adopted


def _within(root: Path, sha: str, review: ev.ProposalReady) -> bool:
    """Whether commit `sha` changes only files of the proposal `review`."""
    out = git_text(root, "diff-tree", "-r", "--no-commit-id", "--name-only", "--root", sha)
    shown = {path for _, path in review.changes}
    return bool(out) and set(out.splitlines()) <= shown


def restore(session: Session, state: Resumed, going: GoingOn) -> None:
    """Give `session` the recorded state to go on with, and what it says first: how far the
    session got, and what changed in the repository meanwhile."""
    said: list[ev.Event] = []
    for step, sha in going.adopted:
        step.status, step.commit = "accepted", sha
        said.append(ev.StepCommitted(step=step.index, title=step.title, sha=sha))
    commits = [*state.commits, *(sha for _, sha in going.adopted)]
    pending = state.pending
    said.insert(
        0,
        ev.SessionResumed(
            session_id=state.session_id,
            head=going.head,
            committed=tuple(commits),
            next_step=pending.index if pending else None,
            message=_resumed_message(state, commits, going),
        ),
    )
    last_ok = state.last_ok or bool(going.adopted)
    session.restore(
        state.plan,
        commits,
        state.rejections,
        last_ok=last_ok,
        said=said,
        shown=going.shown_again,
    )


def _resumed_message(state: Resumed, commits: list[str], going: GoingOn) -> str:
    done = sum(s.status == "accepted" for s in state.plan)
    pending = state.pending
    if not state.plan:
        what = "it was stopped before its plan was made: planning it now"
    elif pending is None:
        what = "no steps left: what is still wrong?"
    else:
        what = f"step {pending.index} ({pending.title}) next, no new plan"
    made = f"{done} of {len(state.plan)} step(s) committed" if state.plan else "nothing done"
    if going.adopted:
        steps = ", ".join(f"step {s.index} ({sha[:8]})" for s, sha in going.adopted)
        going.sentences.insert(0, f"Committed as the last run was killed: {steps}.")
    after = f"; last run ended: {state.outcome}" if state.outcome else ""
    return " ".join(
        [f"Resuming session {state.session_id} ({made}{after}): {what}.", *going.sentences]
    )
