"""A resumed session against the repository as it is now: the commits of steps accepted as the
session was killed (made by the next start's accept journal, or by hand) are matched to their
steps by subject and trailer, and a proposal under review is shown again only while the files
it changes still stand as they were. Then the session is set to go on from there (`restore`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui_engineer.engine import events as ev
from tui_engineer.engine.plans.plan import Step
from tui_engineer.session.resume import ASSISTED, Resumed
from tui_engineer.vcs.plumbing import git_text, run_git
from tui_engineer.vcs.repo import literal

if TYPE_CHECKING:
    from tui_engineer.engine.session import Session


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
