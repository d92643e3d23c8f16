"""Errors meant for the user: a clear message and an exit code, never a traceback."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix. `str(err)` is the whole message; `exit_code` is for the CLI."""

    exit_code: int = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code
