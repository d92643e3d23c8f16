"""The human's own editor for a hand edit during a review: $VISUAL, else $EDITOR, else the
first of nano or vi found (none: the app's own editor, as in a browser). Editors known to take
`+LINE` open at the focused line."""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from tui_engineer.base.errors import UserError

# Editors that open a file at a line given as `+LINE` before it.
PLUS_LINE = {"vi", "vim", "nvim", "gvim", "nano", "pico", "emacs", "emacsclient", "micro",
             "kak", "joe", "ne", "mg", "jed", "vis", "ed"}  # fmt: skip
# Editors that take `-g FILE:LINE`.
GOTO_LINE = {"code", "codium", "code-insiders"}
FALLBACKS = ("nano", "vi")


def editor_command(file: Path, line: int, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The command that opens `file` at `line` in the human's editor; None when there is none."""
    env = os.environ if env is None else env
    chosen = env.get("VISUAL", "").strip() or env.get("EDITOR", "").strip()
    if not chosen:
        chosen = next((name for name in FALLBACKS if shutil.which(name)), "")
    if not chosen:
        return None
    try:
        words = shlex.split(chosen)
    except ValueError as err:
        raise UserError(f"Cannot read the editor command {chosen!r}: {err}.") from None
    name = Path(words[0]).name
    if name in PLUS_LINE:
        return [*words, f"+{max(line, 1)}", str(file)]
    if name in GOTO_LINE:
        return [*words, "-g", f"{file}:{max(line, 1)}"]
    return [*words, str(file)]
