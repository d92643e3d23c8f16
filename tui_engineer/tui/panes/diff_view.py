"""The diff viewer: a unified git diff, per file, syntax highlighted, unified or side by side.

It is one Line API widget (a ScrollView that renders only the rows on screen), so a 20,000-line
diff costs a parse and a list of rows, never thousands of widgets. Syntax highlighting runs lazily
in chunks of rows as they scroll into view, and is cached.
"""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.syntax import Syntax
from rich.text import Span, Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui_engineer.base.names import readable
from tui_engineer.engine.reviews.review import WRITTEN_BY_TESTS
from tui_engineer.tui.panes.diff_rows import (
    TAB,
    DiffLine,
    FileDiff,
    Hunk,
    Row,
    Side,
    build_rows,
    index_sides,
    parse_unified_diff,
)

# The data types stay importable from here, where the viewer's users first found them.
__all__ = ["DiffLine", "DiffView", "FileDiff", "Hunk", "Row", "build_rows", "parse_unified_diff"]

HIGHLIGHT_CHUNK = 200  # rows lexed together: enough context for most tokens, cheap to redo


def _without_background(style: str | Style) -> Style:
    style = Style.parse(style) if isinstance(style, str) else style
    return Style(color=style.color, bold=style.bold, italic=style.italic, underline=style.underline)


class DiffView(ScrollView, can_focus=True):
    """Shows a proposal's diff (or one file's content), virtualised for very large diffs."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--file",
        "diff-view--hunk",
        "diff-view--gutter",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--added-sign",
        "diff-view--removed-sign",
        "diff-view--placeholder",
        "diff-view--filler",
    }
    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        & > .diff-view--file { background: $panel; color: $text; text-style: bold; }
        & > .diff-view--hunk { color: $primary; text-style: italic; }
        & > .diff-view--gutter { color: $text-muted; }
        & > .diff-view--added { background: $success 15%; }
        & > .diff-view--removed { background: $error 15%; }
        & > .diff-view--added-sign { color: $success; text-style: bold; }
        & > .diff-view--removed-sign { color: $error; text-style: bold; }
        & > .diff-view--placeholder { color: $text-muted; text-style: italic; }
        & > .diff-view--filler { background: $panel 40%; }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("]", "next_file", "Next file", show=False),
        Binding("[", "previous_file", "Previous file", show=False),
        Binding("escape", "back_to_diff", "Back to diff"),
    ]

    split: reactive[bool] = reactive(False)

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.placeholder = "No changes to show."
        self._diff_files: list[FileDiff] = []
        # What is on screen: the diff (the same list, so `showing_diff` holds from the start) or
        # one file's content.
        self._files: list[FileDiff] = self._diff_files
        self._rows: list[Row] = []
        self._file_rows: list[int] = []  # row index of each file header
        self._highlights: LRUCache[tuple[int, Side, int], list[Text]] = LRUCache(256)
        self._strips: LRUCache[tuple[int, int], Strip] = LRUCache(2048)
        self._gutter = 5
        self._base_style_cache: Style | None = None

    # -- public API --------------------------------------------------------------------------

    @property
    def files(self) -> list[FileDiff]:
        """The files of the current diff (not of a file shown with `show_file`)."""
        return list(self._diff_files)

    @property
    def showing_diff(self) -> bool:
        return self._files is self._diff_files

    def show_diff(self, diff: str, written: str = "") -> None:
        """Show a unified git diff, then `written` (the diff of the files the step's test runs
        wrote), each of its files marked so; "" and "" show the quiet placeholder."""
        by_tests = parse_unified_diff(written) if written.strip() else []
        for file in by_tests:
            file.written = True
        self._diff_files = (parse_unified_diff(diff) if diff.strip() else []) + by_tests
        self._show(self._diff_files)

    def show_file(self, rel_path: str, text: str) -> None:
        """Show a file's plain content (highlighted), e.g. one the diff does not touch."""
        lines = text.replace("\t", TAB).splitlines()
        hunk = Hunk("", [DiffLine(" ", line, None, n) for n, line in enumerate(lines, 1)])
        file = FileDiff(rel_path, rel_path, status="", hunks=[hunk])
        index_sides(file)
        self._show([file])

    def focus_file(self, rel_path: str) -> bool:
        """Scroll to `rel_path`'s part of the current diff; False when the diff lacks it. The
        path may be exact (the tree's) or as shown (a chat link: U+FFFD for a byte that is not
        UTF-8, as Markdown links carry no surrogates)."""
        for index, file in enumerate(self._diff_files):
            names = (file.new_path, file.old_path)
            if rel_path in names or rel_path in map(readable, names):
                if not self.showing_diff:
                    self._show(self._diff_files)
                self.scroll_to(y=self._file_rows[index], animate=False, immediate=True)
                return True
        return False

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "back_to_diff":
            return not self.showing_diff  # Escape means something only in a file view
        return True

    def action_back_to_diff(self) -> None:
        self._show(self._diff_files)

    def toggle_split(self) -> None:
        self.split = not self.split

    @property
    def current_file(self) -> str | None:
        """The file whose part is at the top of the view."""
        index = self._file_at(int(self.scroll_y))
        return self._files[index].path if index is not None else None

    # -- internals -------------------------------------------------------------------------

    def _show(self, files: list[FileDiff]) -> None:
        self._files = files
        self._highlights.clear()
        self._rebuild()
        self.scroll_to(0, 0, animate=False, immediate=True)
        self.refresh_bindings()  # Escape (back to the diff) and d (split) depend on the view

    def _rebuild(self) -> None:
        # Plain file content has one side only: it never splits.
        self._rows = build_rows(self._files, self.split and self.showing_diff)
        self._file_rows = [y for y, row in enumerate(self._rows) if row.kind == "file"]
        self._strips.clear()
        numbers = [
            line.new_no or line.old_no or 0
            for file in self._files
            for hunk in file.hunks[-1:]
            for line in hunk.lines[-1:]
        ]
        self._gutter = max(4, len(str(max(numbers, default=0))))
        widest = max(
            (len(text) for f in self._files for text in f.new_side + f.old_side), default=0
        )
        gutter = self._gutter * 2 + 3
        width = 0 if self.split else widest + gutter
        self.virtual_size = Size(width, max(len(self._rows), 1))
        self.refresh()

    def watch_split(self, split: bool) -> None:
        top = self._file_at(int(self.scroll_y))
        self._rebuild()
        if top is not None:
            self.scroll_to(0, self._file_rows[top], animate=False, immediate=True)

    def _file_at(self, y: int) -> int | None:
        if not self._rows:
            return None
        return self._rows[min(y, len(self._rows) - 1)].file

    @property
    def _base_style(self) -> Style:
        # `rich_style` walks the DOM on every call; rows ask for it many times per frame.
        if self._base_style_cache is None:
            self._base_style_cache = self.rich_style
        return self._base_style_cache

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style_cache = None
        self._highlights.clear()
        self._strips.clear()

    def action_next_file(self) -> None:
        later = [y for y in self._file_rows if y > self.scroll_y]
        if later:
            self.scroll_to(y=later[0], animate=False)

    def action_previous_file(self) -> None:
        earlier = [y for y in self._file_rows if y < self.scroll_y]
        if earlier:
            self.scroll_to(y=earlier[-1], animate=False)

    # -- highlighting ----------------------------------------------------------------------

    def _code(self, file_index: int, side: Side, idx: int) -> Text:
        chunk = idx // HIGHLIGHT_CHUNK
        key = (file_index, side, chunk)
        texts = self._highlights.get(key)
        if texts is None:
            file = self._files[file_index]
            lines = file.old_side if side == "old" else file.new_side
            start = chunk * HIGHLIGHT_CHUNK
            texts = self._highlight(file.path, lines[start : start + HIGHLIGHT_CHUNK])
            self._highlights[key] = texts
        return texts[idx % HIGHLIGHT_CHUNK]

    def _highlight(self, path: str, lines: list[str]) -> list[Text]:
        lexer = Syntax.guess_lexer(path)
        theme = "monokai" if self.app.current_theme.dark else "friendly"
        syntax = Syntax("", lexer, theme=theme)
        text = syntax.highlight("\n".join(lines))
        # Keep token colours and weights; drop the syntax theme's backgrounds so the diff tints
        # and the app theme show through.
        text.style = ""
        text.spans = [
            Span(span.start, span.end, _without_background(span.style)) for span in text.spans
        ]
        parts = text.split("\n", allow_blank=True)
        while len(parts) < len(lines):
            parts.append(Text(""))
        return list(parts[: len(lines)])

    # -- rendering -------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row_index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self._base_style
        if not self._rows:
            if y == 0:
                style = base + self.get_component_rich_style("diff-view--placeholder")
                return Strip([Segment(f" {self.placeholder}", style)]).extend_cell_length(
                    width, base
                )
            return Strip.blank(width, base)
        if row_index >= len(self._rows):
            return Strip.blank(width, base)
        row = self._rows[row_index]
        return self.decorate(row_index, row, self._render_at(row, row_index, width, scroll_x))

    def decorate(self, row_index: int, row: Row, strip: Strip) -> Strip:
        """A subclass's marks on a drawn row (the review's cursor, dropped hunks)."""
        return strip

    def _render_at(self, row: Row, row_index: int, width: int, scroll_x: int) -> Strip:
        base = self._base_style
        if row.kind == "pair":
            return self._render_pair(row, width, scroll_x)
        key = (row_index, width if row.kind in ("file", "hunk") else 0)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_row(row, width)
            self._strips[key] = strip
        if row.kind in ("file", "hunk"):
            return strip.crop_extend(0, width, base)
        gutter_width = self._gutter * 2 + 3
        gutter = strip.crop(0, gutter_width)
        # Past the code the row keeps its tint (or the pane's background): unstyled cells would
        # show the terminal's default colour, a dark block in a light theme.
        assert row.left is not None
        fill = base + self._line_style(row.left.kind)
        code = strip.crop(gutter_width).crop_extend(scroll_x, scroll_x + width - gutter_width, fill)
        return Strip.join([gutter, code]).simplify()

    def _render_row(self, row: Row, width: int) -> Strip:
        base = self._base_style
        if row.kind == "file":
            return self._render_header(self._files[row.file], width)
        if row.kind == "hunk":
            style = base + self.get_component_rich_style("diff-view--hunk")
            return Strip([Segment(f" {row.text}", style)])
        line = row.left
        assert line is not None
        line_style = self._line_style(line.kind)
        gutter_style = base + self.get_component_rich_style("diff-view--gutter") + line_style
        n = self._gutter
        old = "" if line.old_no is None else str(line.old_no)
        new = "" if line.new_no is None else str(line.new_no)
        gutter = (
            f"{old:>{n}} {new:>{n}} " if self._files[row.file].status else f"{new:>{2 * n + 1}} "
        )
        text = Text(style=base + line_style, no_wrap=True, end="")
        text.append(gutter, gutter_style)
        text.append(line.kind if line.kind != " " else " ", self._sign_style(line.kind))
        text.append_text(
            self._code(row.file, "old" if line.kind == "-" else "new", self._idx(line))
        )
        # The tint runs to the right edge even past the end of the code.
        strip = Strip(text.render(self.app.console))
        pad = max(0, self.virtual_size.width - strip.cell_length)
        return strip.extend_cell_length(strip.cell_length + pad, base + line_style)

    def _render_header(self, file: FileDiff, width: int) -> Strip:
        style = self._base_style + self.get_component_rich_style("diff-view--file")
        text = Text(style=style, no_wrap=True, end="")
        if file.status:
            kind = {"A": "added", "D": "deleted", "R": "renamed", "M": "modified"}[file.status]
            name = f"{file.old_path} → {file.new_path}" if file.status == "R" else file.path
            text.append(f" {file.status} {readable(name)}  ")
            text.append(f"+{file.added}", self.get_component_rich_style("diff-view--added-sign"))
            text.append(" ")
            text.append(
                f"−{file.removed}", self.get_component_rich_style("diff-view--removed-sign")
            )
            text.append(f"  {WRITTEN_BY_TESTS if file.written else kind}")
        else:
            text.append(f" {readable(file.path)}  (not in the diff)")
        strip = Strip(text.render(self.app.console))
        return strip.extend_cell_length(max(width, strip.cell_length), style)

    def _render_pair(self, row: Row, width: int, scroll_x: int) -> Strip:
        base = self._base_style
        half = max(1, (width - 1) // 2)
        left = self._render_half(row, row.left, "old", half, scroll_x)
        right = self._render_half(row, row.right, "new", width - half - 1, scroll_x)
        divider = Strip([Segment("│", base + self.get_component_rich_style("diff-view--gutter"))])
        return Strip.join([left, divider, right])

    def _render_half(
        self, row: Row, line: DiffLine | None, side: Side, width: int, scroll_x: int
    ) -> Strip:
        base = self._base_style
        if line is None:
            return Strip.blank(width, base + self.get_component_rich_style("diff-view--filler"))
        kind = line.kind
        line_style = self._line_style(kind)
        number = line.old_no if side == "old" else line.new_no
        gutter_style = base + self.get_component_rich_style("diff-view--gutter") + line_style
        text = Text(style=base + line_style, no_wrap=True, end="")
        text.append(f"{'' if number is None else number:>{self._gutter}} ", gutter_style)
        text.append(kind, self._sign_style(kind))
        text.append_text(self._code(row.file, side, self._idx(line, side)))
        strip = Strip(text.render(self.app.console))
        gutter_width = self._gutter + 2
        code = strip.crop(gutter_width).crop_extend(
            scroll_x, scroll_x + max(0, width - gutter_width), base + line_style
        )
        return Strip.join([strip.crop(0, gutter_width), code]).crop_extend(
            0, width, base + line_style
        )

    @staticmethod
    def _idx(line: DiffLine, side: Side | None = None) -> int:
        if side is None:
            side = "old" if line.kind == "-" else "new"
        return line.old_idx if side == "old" else line.new_idx

    def _line_style(self, kind: str) -> Style:
        if kind == "+":
            return self.get_component_rich_style("diff-view--added")
        if kind == "-":
            return self.get_component_rich_style("diff-view--removed")
        return Style()

    def _sign_style(self, kind: str) -> Style:
        if kind == "+":
            return self.get_component_rich_style("diff-view--added-sign")
        if kind == "-":
            return self.get_component_rich_style("diff-view--removed-sign")
        return Style()
