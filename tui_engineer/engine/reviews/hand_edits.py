"""The human takes the keyboard during a review: they edit the proposal's files in its shadow
(a front end opens their editor there), and the step is tested again on exactly that tree and
reviewed again, marked "edited by you". The model is told what they changed (review_notes).
Edits made in the user's own files during a review can be taken into the step too."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from tui_engineer.engine.plans.plan import Step
from tui_engineer.engine.reviews.review import UNVERIFIED, Proposal
from tui_engineer.engine.reviews.review_notes import hand_edit_note
from tui_engineer.engine.runtime import Runtime
from tui_engineer.engine.steps.verification import verify_attempt
from tui_engineer.vcs.merge_in import take_user_edits
from tui_engineer.vcs.partial import save_tree


def _edit_since(rt: Runtime, tree: str) -> str:
    """What the human changed on top of the proposal saved as `tree`: a diff."""
    now = save_tree(rt.shadow)  # stages the files: the diff below is of the index
    if now == tree:
        return ""
    return rt.shadow._git.execute(
        ["git", "-C", str(rt.shadow.path), "diff", "--cached", "--no-color", "-M", tree],
        strip_newline_in_stdout=False,
    )


async def after_hand_edit(
    rt: Runtime, step: Step, proposal: Proposal, tree: str
) -> Proposal | None:
    """The proposal as the human left it, tested; None when they changed nothing. `tree`: the
    proposal's files as reviewed (vcs.partial.save_tree)."""
    edit = await asyncio.to_thread(_edit_since, rt, tree)
    if not edit.strip():
        return None
    rt.review_notes.append(hand_edit_note(step, edit))
    diff = await asyncio.to_thread(rt.shadow.diff)
    edited = replace(proposal, diff=diff, edited=True, partial="", dropped=())
    if rt.options.unverified:
        return replace(edited, test_runs=(UNVERIFIED,))
    verified = await verify_attempt(rt, step.index)
    return replace(edited, report=verified.report, test_runs=verified.summaries())


async def take_in_user_edits(rt: Runtime, paths: list[str]) -> list[str]:
    """Merge the user's edits to `paths` (made in their own files during a review) into the
    proposal in the shadow; the files that conflict (left with conflict markers) are returned.
    The front end then answers Decision("edited"), which tests and reviews the result."""
    return await asyncio.to_thread(take_user_edits, rt.shadow, paths)
