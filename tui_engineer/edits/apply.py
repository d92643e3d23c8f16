"""Apply a reply's edits all-or-nothing: each edit is checked and applied to an in-memory copy of
the files it touches; only when every edit applies are the files written (edits/writer.py).
Locating SEARCH text is edits/matching.py; explaining a miss is edits/diagnose.py."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.edits.diagnose import not_found_feedback
from tui_engineer.edits.elision import (
    ELIDED_REPLACE,
    ELIDED_SEARCH,
    comment_elisions,
    elided_pieces,
    is_elision,
)
from tui_engineer.edits.matching import common_indent, dedented, find_matches, locate, reindent
from tui_engineer.edits.parser import (
    ApplyFailed,
    DeleteFile,
    Edit,
    RenameFile,
    SearchReplace,
    UnsafePath,
    WriteFile,
)
from tui_engineer.edits.paths import repo_relative, resolve_safe_path
from tui_engineer.edits.writer import FileState, write_changes

MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF = 8192
_BOM = "\ufeff"
_RESEND = "Nothing was changed: resend all your edits with this corrected."


@dataclass
class ApplyResult:
    """What changed on disk, as repo-relative posix paths."""

    changed: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Text:
    """A text file split into lines without their endings, plus how to put it back together."""

    lines: list[str]
    eol: str = "\n"
    final_newline: bool = True
    bom: bool = False

    def encode(self) -> bytes:
        body = self.eol.join(self.lines)
        if self.lines and self.final_newline:
            body += self.eol
        return ((_BOM if self.bom else "") + body).encode("utf-8")


def _split(text: str) -> list[str]:
    """Lines of "\\n"-terminated text (the parser's form); "" has no lines."""
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []


def _decode(data: bytes, what: str) -> _Text:
    if b"\0" in data[:BINARY_SNIFF]:
        raise ApplyFailed(f"{what} is a binary file; edits only change text files. {_RESEND}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ApplyFailed(
            f"{what} is not UTF-8 text (treated as binary); edits only change text files. {_RESEND}"
        ) from err
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    newlines = text.count("\n")
    crlf = newlines > 0 and text.count("\r\n") == newlines  # mixed files are left as they are
    if crlf:
        text = text.replace("\r\n", "\n")
    final = text.endswith("\n")
    lines = text.split("\n")
    if final:
        lines.pop()
    return _Text(lines, "\r\n" if crlf else "\n", final or not text, bom)


# -- the in-memory workspace -------------------------------------------------------------------


class _Workspace:
    """The repository as the edits leave it, kept in memory until everything applied."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve(strict=True)
        self.files: dict[Path, FileState] = {}
        self.originals: dict[Path, bytes | None] = {}
        self.moved_in: dict[Path, bytes] = {}  # rename targets: the bytes they arrived with
        self.moved_out: set[Path] = set()
        self.renames: list[tuple[str, str]] = []

    def rel(self, path: Path) -> str:
        return repo_relative(self.root, path)

    def get(self, path: Path, name: str) -> FileState:
        if path not in self.files:
            self.files[path] = self._load(path, name)
            self.originals[path] = self.files[path].data
        return self.files[path]

    def _load(self, path: Path, name: str) -> FileState:
        rel = self.rel(path)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return FileState(None)
        except OSError as err:
            raise ApplyFailed(f"{name}: cannot read {rel} ({err.strerror}). {_RESEND}") from err
        if stat.S_ISDIR(st.st_mode):
            raise ApplyFailed(f"{name}: {rel} is a directory, not a file. {_RESEND}")
        if not stat.S_ISREG(st.st_mode):
            raise ApplyFailed(f"{name}: {rel} is not a regular file. {_RESEND}")
        if st.st_size > MAX_FILE_BYTES:
            raise ApplyFailed(_too_big(name, rel, st.st_size))
        return FileState(path.read_bytes(), stat.S_IMODE(st.st_mode))

    def put(self, path: Path, data: bytes | None, name: str, mode: int | None = None) -> None:
        if data is not None:
            if len(data) > MAX_FILE_BYTES:
                raise ApplyFailed(_too_big(name, self.rel(path), len(data)))
            self._check_parents(path, name)
        entry = self.get(path, name)
        self.files[path] = FileState(data, entry.mode if mode is None else mode)

    def _check_parents(self, path: Path, name: str) -> None:
        for parent in path.parents:
            if parent == self.root:
                return
            entry = self.files.get(parent)
            is_file = entry.data is not None if entry else parent.is_file()
            if is_file:
                raise ApplyFailed(
                    f"{name}: cannot create {self.rel(path)} because {self.rel(parent)} is a "
                    f"file, not a folder. {_RESEND}"
                )


def _too_big(name: str, rel: str, size: int) -> str:
    return (
        f"{name}: {rel} would be {size:,} bytes; files over {MAX_FILE_BYTES:,} bytes are not "
        f"edited. {_RESEND}"
    )


def _block_name(number: int, edit: Edit) -> str:
    if isinstance(edit, RenameFile):
        return f"Block {number} (RENAME {edit.path} -> {edit.new_path})"
    kind = {SearchReplace: "SEARCH/REPLACE", WriteFile: "FILE", DeleteFile: "DELETE"}[type(edit)]
    return f"Block {number} ({kind} {edit.path})"


def _search_replace(ws: _Workspace, edit: SearchReplace, number: int) -> None:
    name = _block_name(number, edit)
    path = resolve_safe_path(ws.root, edit.path)
    rel, current = ws.rel(path), ws.get(path, name).data
    search, replace = _split(edit.search), _split(edit.replace)
    if not any(line.strip() for line in search):
        return _create(ws, path, current, edit, name)
    if current is None:
        raise ApplyFailed(
            f"{name}: {rel} does not exist, so its SEARCH text cannot be found. To create it, "
            f"leave SEARCH empty (or use a whole-file FILE block). {_RESEND}"
        )
    text = _decode(current, f"{name}: {rel}")
    starts, norm, search, replace = locate(text.lines, search, replace)
    if not starts and (elided := [line.strip() for line in search if is_elision(line)]):
        if (pieces := elided_pieces(search, replace)) and _apply_pieces(text, pieces):
            return ws.put(path, text.encode(), name)
        raise ApplyFailed(f"{name}: " + ELIDED_SEARCH.format(line=elided[0]) + f" {_RESEND}")
    if not starts:
        already = find_matches(text.lines, replace)[0] if any(s.strip() for s in replace) else []
        found_at = already[0] if len(already) == 1 else None  # several: too common to tell
        raise ApplyFailed(
            not_found_feedback(name, rel, text.lines, search, found_at) + f"\n\n{_RESEND}"
        )
    if len(starts) > 1:
        at = ", ".join(str(s + 1) for s in starts[:10]) + (", ..." if len(starts) > 10 else "")
        raise ApplyFailed(
            f"{name}: the SEARCH text matches {len(starts)} places in {rel} (starting at lines "
            f"{at}). Add a few more unchanged lines around it to SEARCH so it matches exactly "
            f"one place. {_RESEND}"
        )
    start, end = starts[0], starts[0] + len(search)
    _refuse_placeholders(name, "REPLACE", replace, text.lines[start:end])
    if norm is dedented:
        replace = reindent(replace, common_indent(search), common_indent(text.lines[start:end]))
    text.lines[start:end] = replace
    ws.put(path, text.encode(), name)


def _apply_pieces(text: _Text, pieces: list[tuple[list[str], list[str]]]) -> bool:
    """A SEARCH with `...` whose pieces each match exactly one place of the file, in order:
    each piece is replaced and what lies between is kept. False (text unchanged) otherwise."""
    lines, after = list(text.lines), 0
    for search, replace in pieces:
        starts, norm = find_matches(lines, search)
        if len(starts) != 1 or starts[0] < after:
            return False
        start, end = starts[0], starts[0] + len(search)
        if norm is dedented:
            replace = reindent(replace, common_indent(search), common_indent(lines[start:end]))
        lines[start:end] = replace
        after = start + len(replace)
    text.lines = lines
    return True


def _refuse_placeholders(name: str, what: str, new: list[str], old: list[str]) -> None:
    """A "# ... rest unchanged" line written over real code would delete that code."""
    if placeholders := comment_elisions(new, old):
        text = ELIDED_REPLACE.format(what=what, line=placeholders[0])
        raise ApplyFailed(f"{name}: {text} {_RESEND}")


def _create(
    ws: _Workspace, path: Path, current: bytes | None, edit: SearchReplace, name: str
) -> None:
    if current is not None and current.strip():
        raise ApplyFailed(
            f"{name}: the SEARCH part is empty, which creates a new file, but {ws.rel(path)} "
            "already exists and is not empty. To change it, put the lines to replace in SEARCH; "
            f"to replace all of it, use a whole-file FILE block. {_RESEND}"
        )
    ws.put(path, _new_text(edit.replace, name, ws.rel(path)), name)


def _new_text(content: str, name: str, rel: str, like: _Text | None = None) -> bytes:
    if "\0" in content:
        raise ApplyFailed(f"{name}: the content for {rel} contains NUL bytes (binary). {_RESEND}")
    text = _decode(content.encode("utf-8"), f"{name}: {rel}")
    if like is not None:  # overwriting: keep the file's line endings, BOM, final-newline state
        text.eol, text.bom = like.eol, like.bom
        text.final_newline = text.final_newline and like.final_newline
    return text.encode()


def _write_file(ws: _Workspace, edit: WriteFile, number: int) -> None:
    name = _block_name(number, edit)
    path = resolve_safe_path(ws.root, edit.path)
    current = ws.get(path, name).data
    rel = ws.rel(path)
    like = _decode(current, f"{name}: {rel}") if current is not None else None
    if like is not None:  # a new file's placeholder deletes nothing; an existing file's does
        _refuse_placeholders(name, "The new content", _split(edit.content), like.lines)
    ws.put(path, _new_text(edit.content, name, rel, like), name)


def _delete(ws: _Workspace, edit: DeleteFile, number: int) -> None:
    name = _block_name(number, edit)
    path = resolve_safe_path(ws.root, edit.path)
    if ws.get(path, name).data is None:
        raise ApplyFailed(
            f"{name}: {ws.rel(path)} does not exist (maybe already deleted). {_RESEND}"
        )
    ws.put(path, None, name)


def _rename(ws: _Workspace, edit: RenameFile, number: int) -> None:
    name = _block_name(number, edit)
    old = resolve_safe_path(ws.root, edit.path)
    new = resolve_safe_path(ws.root, edit.new_path)
    source = ws.get(old, name)
    if source.data is None:
        raise ApplyFailed(
            f"{name}: {ws.rel(old)} does not exist, so it cannot be renamed. {_RESEND}"
        )
    if old == new:
        raise ApplyFailed(f"{name}: the old and new names are the same file. {_RESEND}")
    if ws.get(new, name).data is not None:
        raise ApplyFailed(
            f"{name}: {ws.rel(new)} already exists; delete it first or pick another name. {_RESEND}"
        )
    ws.put(new, source.data, name, mode=source.mode)
    ws.put(old, None, name)
    ws.moved_in[new] = source.data
    ws.moved_out.add(old)
    ws.renames.append((ws.rel(old), ws.rel(new)))


_HANDLERS: dict[type, Callable[[_Workspace, object, int], None]] = {
    SearchReplace: _search_replace,  # type: ignore[dict-item]
    WriteFile: _write_file,  # type: ignore[dict-item]
    DeleteFile: _delete,  # type: ignore[dict-item]
    RenameFile: _rename,  # type: ignore[dict-item]
}


def _summary(ws: _Workspace) -> ApplyResult:
    result = ApplyResult(renamed=list(ws.renames))
    for path, entry in ws.files.items():
        before, after, rel = ws.originals[path], entry.data, ws.rel(path)
        if before is None and after is not None:
            if path not in ws.moved_in:
                result.created.append(rel)
            elif after != ws.moved_in[path]:
                result.changed.append(rel)
        elif before is not None and after is None:
            if path not in ws.moved_out:
                result.deleted.append(rel)
        elif before != after:
            result.changed.append(rel)
    return result


def _refuse_read_only(ws: _Workspace, edit: Edit, number: int, read_only: set[str]) -> None:
    paths = [edit.path, edit.new_path] if isinstance(edit, RenameFile) else [edit.path]
    for path in paths:
        rel = ws.rel(resolve_safe_path(ws.root, path))
        if rel in read_only:
            raise ApplyFailed(
                f"{_block_name(number, edit)}: {rel} may not be changed in this session (it is "
                "read-only, e.g. the tests your change must pass as they are). Change the other "
                f"files instead. {_RESEND}"
            )


def apply_edits(root: Path, edits: Sequence[Edit], read_only: Sequence[str] = ()) -> ApplyResult:
    """Apply every edit or none. Raises UnsafePath for a hostile path and ApplyFailed (feedback
    for the model) when an edit does not apply or touches a `read_only` file (repo-relative);
    the files are untouched in both cases."""
    ws = _Workspace(root)
    protected = set(read_only)
    for number, edit in enumerate(edits, start=1):
        try:
            if protected:
                _refuse_read_only(ws, edit, number, protected)
            _HANDLERS[type(edit)](ws, edit, number)
        except UnsafePath as err:  # say which block, the model may have sent many
            raise UnsafePath(f"{_block_name(number, edit)}: {err.feedback}") from None
    write_changes(ws.root, ws.files, ws.originals)
    return _summary(ws)
