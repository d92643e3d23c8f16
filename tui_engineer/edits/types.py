"""What a model reply's edits are (the dataclasses) and the errors fed back to the model; kept apart
from the parsers (edits/parser.py, edits/udiff.py) so both can use them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SearchReplace:
    """Replace `search` (whole lines, each "\\n"-terminated) by `replace`.

    An empty `search` creates the file."""

    path: str
    search: str
    replace: str


@dataclass(frozen=True)
class WriteFile:
    """Create or overwrite a whole file."""

    path: str
    content: str


@dataclass(frozen=True)
class DeleteFile:
    path: str


@dataclass(frozen=True)
class RenameFile:
    path: str
    new_path: str


Edit = SearchReplace | WriteFile | DeleteFile | RenameFile


class EditError(Exception):
    """An edit the model must redo. Not a UserError: `feedback` is written for the model."""

    def __init__(self, feedback: str) -> None:
        super().__init__(feedback)
        self.feedback = feedback


class ParseError(EditError):
    """A malformed block: which one and what is missing."""


class UnsafePath(EditError):
    """A path that would write outside the repository or into git's own files."""


class ApplyFailed(EditError):
    """An edit that does not apply to the files as they are (nothing was written)."""


class ReplyTooLarge(EditError):
    """A reply over the size cap; it is not parsed at all."""
