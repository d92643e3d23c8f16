"""The emulated screen's text and the keys typed into a program: what a terminal does and
sends, checked on pyte's screen and on Textual's key events (no process needed)."""

from __future__ import annotations

import pytest
from textual import events

from tui_engineer.base.terminal_screen import TerminalScreen
from tui_engineer.tui.panes.terminal_keys import key_bytes


def test_fewer_lines_keep_the_cursors_line_in_view_and_the_rest_in_the_scrollback() -> None:
    screen = TerminalScreen(20, 6)
    screen.feed(b"one\r\ntwo\r\nthree\r\nfour\r\n$ ")
    screen.resize(20, 3)
    assert screen.screen.display[:3] == ["three".ljust(20), "four".ljust(20), "$".ljust(20)]
    assert screen.text() == "one\ntwo\nthree\nfour\n$"
    screen.feed(b"typed")  # the cursor stayed on its line
    assert screen.text().endswith("\n$ typed")


def test_clear_with_its_scrollback_leaves_only_what_follows() -> None:
    screen = TerminalScreen(20, 3)
    screen.feed(b"a\r\nb\r\nc\r\nd\r\n\x1b[H\x1b[2J\x1b[3Jafter")
    assert screen.text() == "after"


def test_a_line_erased_and_redrawn_short_is_not_joined_to_the_next() -> None:
    screen = TerminalScreen(10, 4)
    screen.feed(b"0123456789abc\x1b[A\r\x1b[2Kshort\r\n\r\nnext")  # up to the wrapped line
    assert screen.text() == "short\nabc\nnext"


def test_a_programs_questions_are_answered_and_private_forms_ignored() -> None:
    screen = TerminalScreen(20, 4)
    answers: list[bytes] = []
    screen.answer = answers.append
    screen.feed(b"ab\x1b[>4;2mcd\x1b[?4mef\x1b[6n")  # vim's modifyOtherKeys; where is the cursor
    assert screen.text() == "abcdef"
    assert answers == [b"\x1b[1;7R"]


@pytest.mark.parametrize(
    ("key", "character", "cursor_keys", "sent"),
    [
        ("a", "a", False, b"a"),
        ("exclamation_mark", "!", False, b"!"),
        ("enter", "\r", False, b"\r"),
        ("backspace", "\x7f", False, b"\x7f"),
        ("tab", "\t", False, b"\t"),
        ("escape", "\x1b", False, b"\x1b"),
        ("ctrl+c", None, False, b"\x03"),
        ("ctrl+d", None, False, b"\x04"),
        ("up", None, False, b"\x1b[A"),
        ("up", None, True, b"\x1bOA"),  # the program asked for application cursor keys
        ("ctrl+left", None, False, b"\x1b[1;5D"),
        ("home", None, False, b"\x1b[H"),
        ("pagedown", None, False, b"\x1b[6~"),
        ("delete", None, False, b"\x1b[3~"),
        ("f1", None, False, b"\x1bOP"),
        ("f5", None, False, b"\x1b[15~"),
        ("alt+b", None, False, b"\x1bb"),
        ("shift+tab", None, False, b"\x1b[Z"),
    ],
)
def test_each_key_sends_what_xterm_sends(
    key: str, character: str | None, cursor_keys: bool, sent: bytes
) -> None:
    assert key_bytes(events.Key(key, character), application_cursor=cursor_keys) == sent
