"""The Diff pane during a review: a line cursor, hunk by hunk navigation, each hunk (or whole
file) kept or dropped (dropped ones dimmed), and comments on lines. What it holds becomes the
review's decision (diff_pane.py: the keys that answer with it); the engine tests the kept
hunks before committing them.
The files the step's test runs wrote come last, each one unit: left out of the commit (dimmed)
unless kept with the same keys.

Hunks are named as the engine names them (engine/reviews/hunks.py): the file's path and the hunk's
position in it; a file without hunks (binary, a pure rename) is one unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import on
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.strip import Strip

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.hunks import WHOLE_FILE, HunkRef
from tui_engineer.engine.reviews.review import LineComment
from tui_engineer.tui.engine_messages import EngineMessage, heard
from tui_engineer.tui.panes.diff_rows import FileDiff, Row
from tui_engineer.tui.panes.diff_view import DiffView

REVIEW_KEYS = {"next_hunk", "previous_hunk", "toggle_hunk", "toggle_file"}
COMMENT_MARK = "●"


@dataclass(frozen=True)
class LineAt:
    """The diff line under the cursor: its file, its number in the new file (the old one for a
    removed line) and its text."""

    path: str
    line: int
    code: str


class ReviewDiffView(DiffView):
    """A DiffView whose hunks can be kept or dropped while a proposal is under review."""

    COMPONENT_CLASSES: ClassVar[set[str]] = DiffView.COMPONENT_CLASSES | {
        "diff-view--cursor",
        "diff-view--dropped",
        "diff-view--comment",
    }
    DEFAULT_CSS = """
    ReviewDiffView {
        & > .diff-view--cursor { background: $accent 35%; }
        & > .diff-view--dropped { color: $text-disabled; background: $surface; }
        & > .diff-view--comment { color: $warning; text-style: bold; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "next_hunk", "Next hunk"),
        Binding("p", "previous_hunk", "Prev hunk"),
        Binding("space", "toggle_hunk", "Keep/drop"),
        Binding("x", "toggle_file", "Drop file", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("up,k", "cursor(-1)", "Up", show=False),
    ]

    class MarksChanged(Message):
        """Hunks were kept or dropped: `kept` of `total` units stay."""

        def __init__(self, kept: int, total: int) -> None:
            super().__init__()
            self.kept, self.total = kept, total

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.reviewing = False  # a proposal is under review: its hunks can be kept or dropped
        self.cursor = 0
        self.dropped: set[HunkRef] = set()
        self.kept_written: set[str] = set()  # files the tests wrote that go in too
        self.comments: list[LineComment] = []
        self._step: int | None = None  # the step under review
        self._dropped_bodies: list[tuple[str, tuple[tuple[str, str], ...]]] = []

    # -- what the review holds ------------------------------------------------------------

    def units(self) -> list[HunkRef]:
        """Every unit of the step's diff, in order (as engine.hunks.units counts them): not the
        files its test runs wrote."""
        return [ref for file in self._diff_files if not file.written for ref in _file_units(file)]

    def written(self) -> list[str]:
        """The files the step's test runs wrote, in order."""
        return [file.path for file in self._diff_files if file.written]

    def start_review(self, step: int, dropped: set[HunkRef] | None = None) -> None:
        """A proposal is under review (its diff is shown): everything kept, or as the engine
        says after a kept subset failed its tests. The same step again (after a hand edit):
        a hunk dropped before stays dropped where it is unchanged."""
        if not dropped and step == self._step:
            dropped = self._same_hunks(self._dropped_bodies)
        if step != self._step:
            self.kept_written = set()
        self._step = step
        self.reviewing = True
        known = set(self.units())
        self.dropped = {ref for ref in (dropped or set()) if ref in known}
        self.kept_written &= set(self.written())
        self.cursor = 0
        self._marks_changed()

    def pause_review(self) -> None:
        """Tested again after a hand edit: no marks change meanwhile; they stay for the review
        that follows (`start_review` with the same step)."""
        self.reviewing = False
        self.refresh()
        self.refresh_bindings()

    def end_review(self) -> None:
        self.reviewing = False
        self._step = None
        self.dropped, self.comments, self.kept_written = set(), [], set()
        self.border_subtitle = ""
        self.refresh_bindings()

    def add_comment(self, comment: LineComment) -> None:
        self.comments.append(comment)
        self._marks_changed()

    def cursor_line(self) -> LineAt | None:
        """The line under the cursor (a hunk header: its first line), else None."""
        if not self._rows or not self.showing_diff:
            return None
        row = self._rows[min(self.cursor, len(self._rows) - 1)]
        file = self._files[row.file]
        line = row.right or row.left
        if line is None and row.kind == "hunk" and row.hunk >= 0:
            line = next(iter(file.hunks[row.hunk].lines), None)
        if line is None:
            return LineAt(file.path, 1, "")
        number = line.new_no if line.new_no is not None else line.old_no
        return LineAt(file.path, number or 1, line.text)

    # -- keys ------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in REVIEW_KEYS or action in {"cursor"}:
            return self.reviewing and self.showing_diff and bool(self._rows)
        return super().check_action(action, parameters)

    def action_cursor(self, step: int) -> None:
        self._move_to(self.cursor + step)

    def action_next_hunk(self) -> None:
        later = [y for y in self._unit_rows() if y > self.cursor]
        if later:
            self._move_to(later[0], top=True)

    def action_previous_hunk(self) -> None:
        earlier = [y for y in self._unit_rows() if y < self.cursor]
        if earlier:
            self._move_to(earlier[-1], top=True)

    def action_toggle_hunk(self) -> None:
        if self._toggle_written():
            return
        ref = self._ref_at(self.cursor)
        if ref is None:  # the header of a file with hunks: the whole file
            self.action_toggle_file()
            return
        self.dropped ^= {ref}
        self._marks_changed()

    def action_toggle_file(self) -> None:
        if not self._rows or self._toggle_written():
            return
        refs = set(_file_units(self._files[self._rows[self.cursor].file]))
        if refs <= self.dropped:
            self.dropped -= refs
        else:
            self.dropped |= refs
        self._marks_changed()

    # -- internals -------------------------------------------------------------------------

    def _toggle_written(self) -> bool:
        """Keep (or leave out again) the file the tests wrote under the cursor; False when the
        cursor is on the step's own diff."""
        file = self._files[self._rows[min(self.cursor, len(self._rows) - 1)].file]
        if not file.written:
            return False
        self.kept_written ^= {file.path}
        self._marks_changed()
        return True

    def _unit_rows(self) -> list[int]:
        """Rows where a unit starts: hunk headers, the headers of files without hunks, and of
        the files the tests wrote (one unit each)."""
        return [y for y, row in enumerate(self._rows) if self._starts_unit(row)]

    def _starts_unit(self, row: Row) -> bool:
        file = self._files[row.file]
        if file.written:
            return row.kind == "file"
        return row.kind == "hunk" and row.hunk >= 0 or row.kind == "file" and not file.hunks

    def _ref_at(self, y: int) -> HunkRef | None:
        if not self._rows or not self.showing_diff:
            return None
        row = self._rows[min(y, len(self._rows) - 1)]
        file = self._files[row.file]
        if row.hunk >= 0:
            return HunkRef(file.path, row.hunk)
        if not file.hunks:
            return HunkRef(file.path, WHOLE_FILE)
        return None

    def _is_dropped(self, row: Row) -> bool:
        file = self._files[row.file]
        if file.written:
            return file.path not in self.kept_written
        ref = self._ref_at_row(row)
        if ref is not None:
            return ref in self.dropped
        units = _file_units(self._files[row.file])
        return bool(units) and set(units) <= self.dropped

    def _ref_at_row(self, row: Row) -> HunkRef | None:
        file = self._files[row.file]
        if row.hunk >= 0:
            return HunkRef(file.path, row.hunk)
        return HunkRef(file.path, WHOLE_FILE) if not file.hunks else None

    def _move_to(self, y: int, *, top: bool = False) -> None:
        if not self._rows:
            return
        self.cursor = max(0, min(y, len(self._rows) - 1))
        height = self.scrollable_content_region.height or 1
        if top or self.cursor < self.scroll_y:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= self.scroll_y + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)
        self.refresh()

    def _rebuild(self) -> None:
        super()._rebuild()
        self.cursor = min(self.cursor, max(0, len(self._rows) - 1))

    def _bodies(self) -> dict[HunkRef, tuple[str, tuple[tuple[str, str], ...]]]:
        """Each unit's path and lines (not its header: line numbers move with an edit above)."""
        found = {}
        for file in self._diff_files:
            for index, hunk in enumerate(file.hunks):
                lines = tuple((line.kind, line.text) for line in hunk.lines)
                found[HunkRef(file.path, index)] = (file.path, lines)
            if not file.hunks:
                found[HunkRef(file.path, WHOLE_FILE)] = (file.path, ())
        return found

    def _same_hunks(self, bodies: list[tuple[str, tuple[tuple[str, str], ...]]]) -> set[HunkRef]:
        return {ref for ref, body in self._bodies().items() if body in bodies}

    def _marks_changed(self) -> None:
        bodies = self._bodies()
        self._dropped_bodies = [bodies[ref] for ref in self.dropped if ref in bodies]
        units = self.units()
        kept = sum(ref not in self.dropped for ref in units)
        parts = []
        if self.dropped:
            parts.append(f"{kept} of {len(units)} hunks kept")
        if self.kept_written:
            parts.append(f"{len(self.kept_written)} of {len(self.written())} files the tests "
                         "wrote kept")  # fmt: skip
        if self.comments:
            parts.append(f"{len(self.comments)} comment{'s' if len(self.comments) > 1 else ''}")
        self.border_subtitle = " · ".join(parts)
        self.refresh()
        self.refresh_bindings()
        self.post_message(self.MarksChanged(kept, len(units)))

    def decorate(self, row_index: int, row: Row, strip: Strip) -> Strip:
        if self._step is None or not self.showing_diff:  # no proposal under review
            return strip
        written = self._files[row.file].written
        if written and row.kind == "file":
            kept = self._files[row.file].path in self.kept_written
            strip = _suffix(strip, "  (kept)" if kept else "  (not committed)")
        if self._is_dropped(row):
            if row.kind in ("file", "hunk") and not written:
                strip = _suffix(strip, "  (dropped)")
            strip = _overlay(strip, self.get_component_rich_style("diff-view--dropped"))
        if self._commented(row):
            mark = self.get_component_rich_style("diff-view--comment")
            strip = Strip.join([Strip([Segment(COMMENT_MARK, mark)]), strip.crop(1)])
        if row_index == self.cursor and self.has_focus and self.reviewing:
            strip = _overlay(strip, self.get_component_rich_style("diff-view--cursor"))
        return strip

    def _commented(self, row: Row) -> bool:
        if not self.comments or row.kind in ("file", "hunk"):
            return False
        path = self._files[row.file].path
        line = row.right or row.left
        if line is None:
            return False
        number = line.new_no if line.new_no is not None else line.old_no
        return any(c.path == path and c.line == number for c in self.comments)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ----- the engine's events that change the diff and its review (tui/engine_messages.py)

    @on(heard(ev.EditsApplied))
    def _edits_applied(self, message: EngineMessage[ev.EditsApplied]) -> None:
        """Work in progress: the step's diff so far, before its tests ran (a fix loop shows
        each attempt as it lands)."""
        event = message.event
        if event.diff.strip():
            self.show_diff(event.diff)
            self.border_title = f"Diff — step {event.step}, in progress (not reviewed yet)"

    @on(heard(ev.ProposalReady))
    def _proposal_ready(self, message: EngineMessage[ev.ProposalReady]) -> None:
        event = message.event
        self.show_diff(event.diff, event.written_diff)
        self.start_review(event.step, {HunkRef(p, i) for p, i in event.dropped})
        edited = " · edited by you" if event.edited else ""
        self.border_title = f"Diff — step {event.step}{edited}"

    @on(heard(ev.DecisionMade))
    def _decision(self, message: EngineMessage[ev.DecisionMade]) -> None:
        if message.event.decision in ("edited", "retest"):  # tested, reviewed again: marks stay
            self.pause_review()
            return
        self.end_review()
        self.show_diff("")
        self.border_title = "Diff"


def _file_units(file: FileDiff) -> list[HunkRef]:
    if not file.hunks:
        return [HunkRef(file.path, WHOLE_FILE)]
    return [HunkRef(file.path, index) for index in range(len(file.hunks))]


def _overlay(strip: Strip, style: Style) -> Strip:
    """`style` over every cell (its colours win over the syntax colours and tints)."""
    return Strip(Segment.apply_style(iter(strip), post_style=style), strip.cell_length)


def _suffix(strip: Strip, text: str) -> Strip:
    """`text` written over the row's end of text (header rows are padded to the width)."""
    plain = "".join(segment.text for segment in strip).rstrip()
    width = strip.cell_length
    if len(plain) + len(text) > width:
        return strip
    end = len(plain)
    parts = [strip.crop(0, end), Strip([Segment(text)]), strip.crop(end + len(text))]
    return Strip.join(parts).crop_extend(0, width, None)
