"""The running command's screen in the Shell pane: the emulated terminal (base/terminal_screen.py,
pyte) drawn cell by cell with its colours and attributes, the cursor shown while the human
types into the program. Its size is the pane's: a resize is passed on to the pseudo-terminal."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget

from tui_engineer.base.terminal_screen import TerminalScreen

# pyte's colour names (its "brown" is ANSI yellow) as the 16 ANSI colours, which the theme sets.
_ANSI = ["black", "red", "green", "brown", "blue", "magenta", "cyan", "white"]
_COLOURS = {name: f"color({n})" for n, name in enumerate(_ANSI)}
_COLOURS |= {f"bright{name}": f"color({n + 8})" for n, name in enumerate(_ANSI)}
_COLOURS["bfightmagenta"] = "color(13)"  # pyte's own spelling of a background's


def _colour(value: str) -> str | None:
    if value == "default":
        return None
    if value in _COLOURS:
        return _COLOURS[value]
    return f"#{value}" if len(value) == 6 else None


def _style(char: object) -> Style:
    return Style(
        color=_colour(char.fg),  # type: ignore[attr-defined]
        bgcolor=_colour(char.bg),  # type: ignore[attr-defined]
        bold=char.bold or None,  # type: ignore[attr-defined]
        italic=char.italics or None,  # type: ignore[attr-defined]
        underline=char.underscore or None,  # type: ignore[attr-defined]
        strike=char.strikethrough or None,  # type: ignore[attr-defined]
        reverse=char.reverse or None,  # type: ignore[attr-defined]
    )


class TerminalView(Widget):
    DEFAULT_CSS = """
    TerminalView { height: 1fr; background: transparent; }
    """

    class Resized(Message):
        """The view (the pseudo-terminal's screen) has a new size."""

        def __init__(self, columns: int, lines: int) -> None:
            super().__init__()
            self.columns, self.lines = columns, lines

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.terminal: TerminalScreen | None = None
        self.show_cursor = False  # while the human types into the program

    def show(self, terminal: TerminalScreen | None) -> None:
        self.terminal = terminal
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width and event.size.height:
            self.post_message(self.Resized(event.size.width, event.size.height))

    def render(self) -> Text:
        terminal = self.terminal
        if terminal is None:
            return Text()
        screen = terminal.screen
        cursor = screen.cursor
        text = Text(no_wrap=True, overflow="crop", end="")
        styles: dict[tuple[object, ...], Style] = {}
        at_cursor = (cursor.x, cursor.y) if self.show_cursor and not cursor.hidden else None
        for y in range(screen.lines):
            if y:
                text.append("\n")
            line = screen.buffer[y]
            run: list[str] = []
            run_key: tuple[object, ...] = ()
            for x in range(screen.columns):
                char = line[x]
                if not char.data:  # the second cell of a wide character
                    continue
                key = (*char[1:], (x, y) == at_cursor)  # the same attributes: one run
                if key != run_key and run:
                    text.append("".join(run), styles[run_key])
                    run = []
                if key not in styles:
                    style = _style(char)
                    styles[key] = style + Style(reverse=not char.reverse) if key[-1] else style
                run_key = key
                run.append(char.data)
            if run:
                text.append("".join(run), styles[run_key])
        return text
