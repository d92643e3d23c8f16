"""What a review decided, in words for the model: hunks the human dropped (with their reasons),
an edit the human made by hand, review comments on lines. They go with the model's next call
(Runtime.review_notes), whatever that call is: the rest of the plan or a new proposal."""

from __future__ import annotations

from collections.abc import Sequence

from tui_engineer.base.names import readable
from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.hunks import WHOLE_FILE, HunkRef
from tui_engineer.engine.reviews.review import DroppedHunk, LineComment


def _fenced(text: str) -> str:
    return f"```diff\n{readable(text).rstrip()}\n```"


def dropped_note(step: Step, dropped: Sequence[DroppedHunk], committed: bool) -> str:
    """The hunks the human left out of step `step`; `committed`: the rest went in."""
    outcome = (
        "The rest of the step was committed without them"
        if committed
        else "The step is still under review"
    )
    parts = [f"In step {step.index} ({step.title}) the human dropped {len(dropped)} hunk(s) of "
             f"your change. {outcome}; do not add them back unless asked."]  # fmt: skip
    for hunk in dropped:
        what = "this file change" if hunk.index == WHOLE_FILE else "this hunk"
        reason = f" — reason: {hunk.reason}" if hunk.reason else ""
        parts.append(f"The human dropped {what} of {readable(hunk.path)}{reason}:\n"
                     f"{_fenced(hunk.text)}")  # fmt: skip
    return "\n\n".join(parts)


def hand_edit_note(step: Step, edit: str) -> str:
    """The human's own change on top of the proposal of step `step` (a diff)."""
    return (
        f"During the review of step {step.index} ({step.title}) the human edited your change "
        "by hand. This is what they changed on top of it; keep it, and build on it:\n"
        f"{_fenced(edit)}"
    )


def comments_text(comments: Sequence[LineComment]) -> str:
    """The comments as one review, each with its file and line."""
    lines = []
    for comment in comments:
        code = f" (`{readable(comment.code).strip()}`)" if comment.code.strip() else ""
        lines.append(f"- {readable(comment.where())}{code}: {comment.text}")
    return "Review comments:\n" + "\n".join(lines)


def comments_note(step: Step, comments: Sequence[LineComment]) -> str:
    """Comments on a step that was accepted anyway: worth knowing for the rest of the plan."""
    return (
        f"Step {step.index} ({step.title}) was accepted with these review comments; take them "
        f"into account from now on.\n{comments_text(comments)}"
    )


def commit_lines(dropped: Sequence[DroppedHunk], kept: str, edited: bool,
                 comments: Sequence[LineComment], written: Sequence[str] = ()) -> str:  # fmt: skip
    """What an accepted step's commit body says about its review ("" when nothing to say)."""
    lines: list[str] = []
    if written:
        lines.append(f"Kept files the tests wrote: {', '.join(readable(p) for p in written)}.")
    if edited:
        lines.append("Edited by you during the review.")
    if dropped:
        left_out = "; ".join(
            readable(HunkRef(hunk.path, hunk.index).label())
            + (f" ({hunk.reason})" if hunk.reason else "")
            for hunk in dropped
        )
        counts = kept.split(",")[0]  # "partial: 2 of 3 hunks"
        lines.append(f"{counts.capitalize()} kept; left out: {left_out}.")
    if comments:
        lines.append(comments_text(comments))
    return "\n".join(lines)
