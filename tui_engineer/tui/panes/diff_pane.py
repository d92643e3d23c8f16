"""The Diff pane's keys that answer the review with what the pane holds: `a` accepts the kept
hunks (asking why for the dropped ones), `r` rejects with a reason and the comments, `s`
skips; `i` comments on the line at the cursor, `o` edits the proposal by hand in your own
editor (or in the app's own under a browser), and edits you made in your own tree are offered
to the step. The marks themselves (kept and dropped hunks, comments) are diff_review.py's; the
engine tests whatever is to be committed (engine/reviews/hand_edits.py)."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import ClassVar

from textual.app import SuspendNotSupported
from textual.binding import Binding, BindingType

from tui_engineer.base.errors import UserError
from tui_engineer.base.names import readable
from tui_engineer.engine.reviews.hunks import HunkRef, units
from tui_engineer.engine.reviews.review import Decision, DroppedHunk, LineComment
from tui_engineer.tui.answering import Say, reviewing_now
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.editor import editor_command
from tui_engineer.tui.panes.diff_review import ReviewDiffView
from tui_engineer.tui.screens import RejectReasonScreen
from tui_engineer.tui.screens.pair import (
    CommentScreen,
    HandEditScreen,
    PartialAcceptScreen,
    TakeEditsScreen,
)

PAIR_ACTIONS = {"edit_by_hand", "comment"}
# Seconds a proposal is on screen before `a` or `s` decide it. A step prepared ahead is under
# review a moment after the last accept: a double tap or a held key must not decide it unseen.
REVIEW_SETTLE = 0.5


class DiffPane(ReviewDiffView):
    """The review's Diff pane, answering the engine through `controller`. The decision keys
    (`a`, `r`, `s`) are bound on the session's screen, so that they work whatever pane has the
    focus; they call `accept`, `reject` and `skip` here."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "edit_by_hand", "Edit"),
        Binding("i", "comment", "Comment"),
    ]

    def __init__(self, controller: SessionController, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.controller = controller
        self._offering = False  # the dialog offering to take the user's own edits in is open
        self.review_settle = REVIEW_SETTLE  # a test of a loaded machine may widen it
        self._held_until = 0.0  # a press too soon keeps `a` and `s` waiting (a key held down)
        self._said_for = -1.0  # the question (its `asked_at`) the wait was said for

    def reviewing_now(self) -> bool:
        return reviewing_now(self.controller, self.app)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in PAIR_ACTIONS:  # on a line of the diff under review (not a file's content)
            return self.reviewing_now() and self.showing_diff
        return super().check_action(action, parameters)

    # -- decisions -----------------------------------------------------------------------

    @property
    def review_settled(self) -> bool:
        """The proposal under review was on screen long enough for `a` and `s` to decide it
        (counted from the engine's question, which opens as the proposal is shown)."""
        opened = self.controller.reviewer.asked_at + self.review_settle
        return time.monotonic() >= max(opened, self._held_until)

    def _too_soon(self, key: str) -> bool:
        """A decision key pressed as the proposal appeared: not taken, said once. Each such
        press starts the wait again, so a key held down never decides."""
        if self.review_settled:
            return False
        self._held_until = time.monotonic() + self.review_settle
        reviewer = self.controller.reviewer
        if self._said_for != reviewer.asked_at and reviewer.proposal is not None:
            self._said_for = reviewer.asked_at
            step = reviewer.proposal.step.index
            self.notify(f"Step {step} just appeared: look it over, then press {key}.", timeout=4)
        return True

    def accept(self) -> None:
        """`a`: accept; with hunks dropped, ask for reasons first, then the kept ones are tested
        and committed (or the review goes on, saying they failed)."""
        if self._too_soon("a"):
            return
        comments = tuple(self.comments)
        kept_written = tuple(path for path in self.written() if path in self.kept_written)
        if not self.dropped:
            self.controller.answer(Decision("accept", comments=comments, kept_written=kept_written))
            return
        order = self.units()
        dropped = [ref for ref in order if ref in self.dropped]
        kept = len(order) - len(dropped)
        if kept == 0:
            self.notify(
                "Every hunk is dropped: skip the step (s) or reject it (r) instead.",
                severity="warning",
            )
            return
        texts = self._hunk_texts()

        def done(reasons: dict[HunkRef, str] | None) -> None:
            if reasons is None:
                return
            left_out = tuple(
                DroppedHunk(ref.path, ref.index, texts.get(ref, ""), reasons.get(ref, ""))
                for ref in dropped
            )
            decision = Decision(
                "accept", dropped=left_out, comments=comments, kept_written=kept_written
            )
            self.controller.answer(decision)

        self.app.push_screen(PartialAcceptScreen(dropped, kept, len(order)), done)

    def _hunk_texts(self) -> dict[HunkRef, str]:
        proposal = self.controller.reviewer.proposal
        if proposal is None:
            return {}
        return {unit.ref: unit.text for unit in units(proposal.diff)}

    def skip(self) -> None:
        if not self._too_soon("s"):
            self.controller.answer(Decision("skip", "skipped by the human"))

    def reject(self) -> None:
        proposal = self.controller.reviewer.proposal
        if proposal is None:
            return

        def done(reason: str | None) -> None:
            if reason is not None:
                comments = tuple(self.comments)  # sent with the reason, as one review
                self.controller.answer(Decision("reject", reason, comments=comments))

        self.app.push_screen(RejectReasonScreen(proposal.step.title), done)

    # -- comments ------------------------------------------------------------------------

    def action_comment(self) -> None:
        at = self.cursor_line()
        if not self.reviewing_now() or at is None:
            return
        where = f"{readable(at.path)}:{at.line}"

        def done(text: str | None) -> None:
            if text:
                self.add_comment(LineComment(at.path, at.line, text, at.code))
                self.post_message(Say(f"Comment on {where}: {text}"))

        self.app.push_screen(CommentScreen(where, at.code), done)

    # -- hand edits ----------------------------------------------------------------------

    async def action_edit_by_hand(self) -> None:
        """`o`: the file at the cursor, in the step's shadow, in your editor; then the step is
        tested again and reviewed again, marked "edited by you"."""
        at = self.cursor_line()
        if not self.reviewing_now() or at is None or self.controller.session is None:
            return
        shadow = self.controller.session.rt.shadow.path
        file = shadow / at.path
        if not file.is_file():
            self.notify(f"{readable(at.path)} is not in the proposal (deleted): nothing to edit.")
            return
        try:
            command = None if self.app.is_web else editor_command(file, at.line)
        except UserError as err:
            self.notify(str(err), title="Edit by hand", severity="error")
            return
        if command is None:  # a browser has no terminal to hand over; or no editor is found
            self._edit_in_app(file, at.path, at.line)
            return
        if await self._run_editor(command, shadow) and self.reviewing_now():
            self.controller.answer(Decision("edited", "edited by hand"))

    def _edit_in_app(self, file: Path, path: str, line: int) -> None:
        """In a browser no terminal editor can run: the file in an editor of the app's own."""
        try:
            data = file.read_bytes()
        except OSError as err:
            self.notify(f"Cannot open {readable(path)}: {err.strerror}", severity="error")
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = "\0"
        if "\0" in text[:8192]:  # its bytes would not survive a round trip through the box
            self.notify(
                f"{readable(path)} is binary or not UTF-8: edit it in a terminal.",
                severity="warning",
            )
            return

        def done(edited: str | None) -> None:
            if edited is None or not self.reviewing_now():
                return
            file.write_text(edited, encoding="utf-8")
            self.controller.answer(Decision("edited", "edited by hand"))

        self.app.push_screen(HandEditScreen(readable(path), text, line), done)

    async def _run_editor(self, command: list[str], cwd: Path) -> bool:
        """Hand the terminal to the editor until it exits; False when it could not run."""
        try:
            try:
                with self.app.suspend():
                    code = subprocess.run(command, cwd=cwd).returncode
            except SuspendNotSupported:
                # No terminal to hand over (a test, a script): the editor runs as it is.
                done = await asyncio.to_thread(
                    subprocess.run, command, cwd=cwd, stdin=subprocess.DEVNULL,
                    capture_output=True,
                )  # fmt: skip
                code = done.returncode
        except OSError as err:
            self.notify(f"Could not start {command[0]}: {err.strerror}", severity="error")
            return False
        if code != 0:
            self.notify(f"{command[0]} exited with status {code}.", severity="warning")
        return True

    # -- edits in the user's own tree -----------------------------------------------------

    def offer_user_edits(self, paths: list[str]) -> None:
        """Files the proposal changes were edited in the user's tree: offer to take the edits
        into the step (a three-way merge in the shadow, then tested again as a hand edit)."""
        names = ", ".join(readable(p) for p in paths)
        if self._offering:
            return  # one save can come as several batches: the dialog open answers them all
        session = self.controller.session
        if not self.reviewing_now() or session is None:
            self.post_message(
                Say(
                    f"You edited {names}, which this proposal also changes: accepting it would "
                    "be refused rather than write over your edits. Reject it with a reason to "
                    "get a fresh one."
                )
            )
            return

        async def chosen(take: bool | None) -> None:
            self._offering = False
            if not take or not self.reviewing_now():
                self.post_message(
                    Say(f"Your edits to {names} stay in your files, not in the step.")
                )
                return
            from tui_engineer.engine.reviews.hand_edits import take_in_user_edits

            conflicted = await take_in_user_edits(session.rt, paths)
            if conflicted:
                self.post_message(
                    Say(
                        f"Your edits to {', '.join(conflicted)} conflict with the proposal: the "
                        "file shows both (conflict markers); fix it with o.",
                        error=True,
                    )
                )
            self.controller.answer(Decision("edited", "your edits taken in"))

        self._offering = True
        self.app.push_screen(TakeEditsScreen(paths), chosen)
