"""Whether the app has a terminal to draw on. Started with stdin or stdout not a terminal (a
file, a pipe, /dev/null, cron) the app wrote escape codes into the output and then spun at
100% CPU for ever; it now refuses at once and names the headless command."""

from __future__ import annotations

import os
import sys

from tui_engineer.base.errors import UserError

# textual-serve (`tui-engineer serve`) runs each tab's app with its own driver over pipes and
# names it in this variable: such an app needs no terminal.
DRIVER_VARIABLE = "TEXTUAL_DRIVER"


def require_terminal() -> None:
    """UserError (exit 2) unless stdin and stdout are terminals or a driver was named."""
    if os.environ.get(DRIVER_VARIABLE):
        return
    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout))
               if not _is_terminal(stream)]  # fmt: skip
    if missing:
        raise UserError(
            f"the app needs a terminal, but {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not one (a file, a pipe or /dev/null). "
            'For scripts use `tui-engineer run "REQUEST" --yes` (--json for one event per line).'
        )


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream is not None and stream.isatty())  # type: ignore[attr-defined]
    except (ValueError, OSError):  # closed
        return False
