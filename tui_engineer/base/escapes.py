"""Terminal escape sequences (colours, cursor moves, titles) taken out of a program's output:
a test runner asked for colour (`zope-testrunner -c`, `pytest --color=yes`, FORCE_COLOR) prints
`\\x1b[1;31m…\\x1b[0m`, which a tail shown to the human and a prompt to the model must not hold."""

from __future__ import annotations

import re

# CSI (`ESC [ … final`: colours, cursor moves, erases), OSC (`ESC ] … BEL|ESC \\`: titles,
# links) and the two-character escapes (`ESC 7`, `ESC =`).
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


def without_escapes(text: str) -> str:
    """`text` with its terminal escape sequences removed (the text between them kept)."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text
