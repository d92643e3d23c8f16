"""What a command on a pseudo-terminal shows: its output fed to pyte, a real terminal emulator
(VT100/xterm escapes, cursor movement, erasing, colours), so a REPL, a pager, a progress bar or
a curses program looks as in a terminal. Nothing here parses escapes by hand; this adapter adds
only what the Shell pane needs beside pyte's screen:

- the scrollback: lines scrolled off the top, kept (pyte's `HistoryScreen` pages through its
  history, which is not wanted here), up to `SCROLLBACK` lines;
- soft wraps: a line the screen wrapped at its right edge is one line again in `text()`, so
  what is kept and sent to the model (and the secrets masked in it) are the program's lines;
- the alternate screen (xterm's private modes 1049/1047/47), which pyte lacks: a full-screen
  program draws there, and the screen before it comes back when it leaves;
- answers to a program's questions (where is the cursor, what terminal is this), which pyte
  makes but leaves unsent: they go back to the program (`answer`);
- a private form of a sequence that pyte would pass to a handler that takes none (vim's
  `CSI > 4;2 m`, which crashed pyte's parser and lost the rest of the output) is ignored.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

import pyte
from pyte.screens import Margins

SCROLLBACK = 5_000  # lines kept above the screen
_ALTERNATE = {1049, 1047, 47}  # private modes that switch to the alternate screen
# Private modes as pyte keeps them (shifted by 5): DECCKM, arrows send ESC O x; and 2004,
# the program tells a paste from typing.
APPLICATION_CURSOR = 1 << 5
BRACKETED_PASTE = 2004 << 5


class _Screen(pyte.Screen):
    def __init__(self, columns: int, lines: int) -> None:
        self.scrollback: deque[Any] = deque(maxlen=SCROLLBACK)
        self._drawing = False
        self._saved: tuple[dict[int, Any], Any] | None = None  # the main screen, when alternate
        self.answer: Callable[[bytes], object] | None = None  # to the program's input
        super().__init__(columns, lines)

    def write_process_input(self, data: str) -> None:
        if self.answer is not None:
            self.answer(data.encode())

    @property
    def alternate(self) -> bool:
        return self._saved is not None

    def draw(self, data: str) -> None:
        self._drawing = True  # a line feed now is the right edge's wrap, not the program's
        try:
            super().draw(data)
        finally:
            self._drawing = False

    def linefeed(self) -> None:
        if self._drawing:
            self.buffer[self.cursor.y].wrapped = True  # pyte's lines are dicts: it travels
        super().linefeed()

    def index(self) -> None:
        top, bottom = self.margins or Margins(0, self.lines - 1)
        if self.cursor.y == bottom and top == 0 and not self.alternate:
            self.scrollback.append(self.buffer[top])
        super().index()

    def erase_in_display(self, how: int = 0, *args: Any, **kwargs: Any) -> None:
        super().erase_in_display(how, *args, **kwargs)
        ends = {0: (self.cursor.y, self.lines), 1: (0, self.cursor.y + 1)}
        for y in range(*ends.get(how, (0, self.lines))):  # blank now: no longer wrapped
            self.buffer[y].wrapped = False
        if how == 3:  # "clear the scrollback too" (`clear`)
            self.scrollback.clear()

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        super().erase_in_line(how, private)
        if how != 1:  # its end erased: a line redrawn shorter is not wrapped any more
            self.buffer[self.cursor.y].wrapped = False

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and _ALTERNATE & set(modes) and self._saved is None:
            self._saved = (dict(self.buffer), self.cursor)
            self.buffer.clear()
            self.cursor = pyte.screens.Cursor(0, 0, self.cursor.attrs)
            self.dirty.update(range(self.lines))
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and _ALTERNATE & set(modes) and self._saved is not None:
            lines, cursor = self._saved
            self._saved = None
            self.buffer.clear()
            self.buffer.update(lines)
            self.cursor = cursor
            self.dirty.update(range(self.lines))
        super().reset_mode(*modes, **kwargs)


def _ignoring_private(handler: Callable[..., None]) -> Callable[..., None]:
    def handle(self: _Screen, *params: int, private: bool = False) -> None:
        if not private:
            handler(self, *params)

    return handle


def _takes_private(handler: Callable[..., None]) -> bool:
    parameters = inspect.signature(handler).parameters.values()
    return any(p.name == "private" or p.kind is p.VAR_KEYWORD for p in parameters)


for _name in set(pyte.Stream.csi.values()):
    if not _takes_private(getattr(_Screen, _name)):
        setattr(_Screen, _name, _ignoring_private(getattr(_Screen, _name)))


class TerminalScreen:
    """A terminal's screen of `columns` × `lines`, fed a command's bytes as they come."""

    def __init__(self, columns: int = 80, lines: int = 24) -> None:
        self.screen = _Screen(max(columns, 2), max(lines, 1))
        self._stream = pyte.ByteStream(self.screen)

    @property
    def columns(self) -> int:
        return self.screen.columns

    @property
    def lines(self) -> int:
        return self.screen.lines

    @property
    def application_cursor(self) -> bool:
        return APPLICATION_CURSOR in self.screen.mode

    @property
    def bracketed_paste(self) -> bool:
        return BRACKETED_PASTE in self.screen.mode

    @property
    def answer(self) -> Callable[[bytes], object] | None:
        """Where the terminal's answers to the program go (its pseudo-terminal's input)."""
        return self.screen.answer

    @answer.setter
    def answer(self, send: Callable[[bytes], object] | None) -> None:
        self.screen.answer = send

    def feed(self, data: bytes) -> None:
        try:
            self._stream.feed(data)
        except Exception:  # noqa: BLE001  # a sequence pyte mishandles costs the rest of this
            pass  # chunk (pyte resets its parser), never the command's run

    def resize(self, columns: int, lines: int) -> None:
        """A new size (the pane's). Fewer lines: those on top go to the scrollback so that the
        cursor's line stays in view, as terminals do (pyte's own resize drops top lines but
        leaves the cursor where it was)."""
        columns, lines = max(columns, 2), max(lines, 1)
        screen = self.screen
        if lines < screen.lines:
            rows = [screen.buffer[y] for y in range(screen.lines)]
            gone = max(0, screen.cursor.y - (lines - 1))
            if not screen.alternate:
                screen.scrollback.extend(rows[:gone])
            screen.buffer.clear()
            screen.buffer.update(enumerate(rows[gone : gone + lines]))
            screen.cursor.y -= gone
            screen.lines = lines
        screen.resize(lines, columns)
        screen.set_margins()
        screen.dirty.update(range(screen.lines))

    def text(self) -> str:
        """The scrollback and the screen as text: no escapes, each line's trailing blanks and
        the trailing blank lines left out, a wrapped line one line again."""
        screen = self.screen
        rows = [*screen.scrollback, *(screen.buffer[y] for y in range(screen.lines))]
        out: list[str] = []
        joined = ""
        for row in rows:
            chars = "".join(row[x].data for x in range(screen.columns))
            if getattr(row, "wrapped", False):
                joined += chars
                continue
            out.append((joined + chars).rstrip())
            joined = ""
        if joined:
            out.append(joined.rstrip())
        while out and not out[-1]:
            out.pop()
        return "\n".join(out)
