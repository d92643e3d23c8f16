"""An editor's unsaved buffers as the model's context (ACP's fs/read_text_file, when the client
offers it): the files a prompt shows are read through the editor, so the model works on what
the user sees. The shadow still holds the saved tree: a buffer that differs from the saved file
is said once in the thread, since the step is built on the saved file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from tui_engineer.engine import events as ev

# The front end's reader: a repo-relative path's text as the editor holds it, None if it cannot.
BufferReader = Callable[[str], Awaitable[str | None]]


def _saved(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


async def unsaved_buffers(
    read: BufferReader | None,
    paths: Sequence[str],
    roots: tuple[Path, Path],
    emit: ev.EventSink,
    said: set[str],
) -> dict[str, str]:
    """The buffers that differ from the saved files, for files the session has not changed
    (`roots`: the user's repository and the shadow; a file the step edits is the shadow's)."""
    if read is None:
        return {}
    root, shadow = roots
    found: dict[str, str] = {}
    for path in paths:
        held = await read(path)
        saved = _saved(root / path)
        if held is None or saved is None or held == saved:
            continue
        ours = _saved(shadow / path) == saved  # the session has not changed it (yet)
        key = f"buffer:{path}:{hash(held)}"
        if key not in said:
            said.add(key)
            emit(ev.Notice(message=_notice(path, ours)))
        if ours:
            found[path] = held
    return found


def _notice(path: str, shown: bool) -> str:
    if shown:
        return (
            f"{path} has unsaved changes in your editor: the model sees them, but the step is "
            "built on the saved file (save it to have them in the step's commit)."
        )
    return (
        f"{path} has unsaved changes in your editor that the model does not see: this session "
        "has already changed the file (save yours, or let the step go first)."
    )
