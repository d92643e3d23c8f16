"""What a terminal sends for a key (xterm's sequences): the Shell pane forwards each key to the
program on the pseudo-terminal while the human types into it."""

from __future__ import annotations

from textual import events

_CURSOR = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
_TILDE = {"insert": 2, "delete": 3, "pageup": 5, "pagedown": 6}
_F5_TO_F12 = (15, 17, 18, 19, 20, 21, 23, 24)
_TILDE |= {f"f{n}": code for n, code in zip(range(5, 13), _F5_TO_F12, strict=True)}
_SS3 = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
_PLAIN = {
    "enter": "\r",
    "tab": "\t",
    "shift+tab": "\x1b[Z",
    "backspace": "\x7f",
    "ctrl+h": "\x08",
    "escape": "\x1b",
    "space": " ",
    "ctrl+space": "\x00",
    "ctrl+at": "\x00",
    "ctrl+left_square_bracket": "\x1b",
    "ctrl+backslash": "\x1c",
    "ctrl+circumflex_accent": "\x1e",
    "ctrl+underscore": "\x1f",
}
# xterm's modifier parameter: 1 + shift 1, alt 2, ctrl 4.
_MODIFIERS = {"shift": 1, "alt": 2, "ctrl": 4}


def key_bytes(event: events.Key, *, application_cursor: bool = False) -> bytes:
    """The bytes for `event` (b"" when a terminal sends nothing for it). `application_cursor`:
    the program asked for ESC O arrows (DECCKM, as readline and vim do)."""
    key = event.key
    if key in _PLAIN:
        return _PLAIN[key].encode()
    *mods, name = key.split("+")
    modifier = 1 + sum(_MODIFIERS.get(m, 0) for m in mods)
    if name in _CURSOR:
        if modifier > 1:
            return f"\x1b[1;{modifier}{_CURSOR[name]}".encode()
        return f"\x1b{'O' if application_cursor else '['}{_CURSOR[name]}".encode()
    if name in _TILDE:
        suffix = f";{modifier}" if modifier > 1 else ""
        return f"\x1b[{_TILDE[name]}{suffix}~".encode()
    if name in _SS3:
        return (
            f"\x1b[1;{modifier}{_SS3[name]}".encode()
            if modifier > 1
            else f"\x1bO{_SS3[name]}".encode()
        )
    if mods == ["ctrl"] and len(name) == 1 and name.isalpha():
        return bytes([ord(name.lower()) & 0x1F])  # Ctrl-C is \x03, Ctrl-D \x04
    if "alt" in mods and len(name) == 1:
        return b"\x1b" + name.encode()  # Meta sends ESC first, as xterm's default
    return event.character.encode() if event.character else b""
