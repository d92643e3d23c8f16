"""The edit protocol: how the model writes file edits (docs/protocol.md), how they are parsed,
checked (path safety) and applied all-or-nothing."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from tui_engineer.edits.apply import MAX_FILE_BYTES, ApplyResult, apply_edits
from tui_engineer.edits.parser import (
    MAX_REPLY_BYTES,
    ApplyFailed,
    DeleteFile,
    Edit,
    EditError,
    ParseError,
    RenameFile,
    ReplyTooLarge,
    SearchReplace,
    UnsafePath,
    WriteFile,
    parse_edits,
)
from tui_engineer.edits.paths import resolve_safe_path


@cache
def edit_format_instructions() -> str:
    """The prompt text that teaches the model the edit format (packaged data)."""
    resource = files("tui_engineer").joinpath("prompts", "edit_format.md")
    return resource.read_text(encoding="utf-8").strip()


__all__ = [
    "MAX_FILE_BYTES",
    "MAX_REPLY_BYTES",
    "ApplyFailed",
    "ApplyResult",
    "DeleteFile",
    "Edit",
    "EditError",
    "ParseError",
    "RenameFile",
    "ReplyTooLarge",
    "SearchReplace",
    "UnsafePath",
    "WriteFile",
    "apply_edits",
    "edit_format_instructions",
    "parse_edits",
    "resolve_safe_path",
]
