"""The two text fixes most pre-commit configs declare, done here so that nothing needs
installing: `trailing-whitespace` (spaces and tabs at line ends) and `end-of-file-fixer` (a file
ends in exactly one newline). Run as `python -m tui_engineer.verify.checks.fixers ID FILE...` in
the sandbox, like any check; each file rewritten is named, and the exit code is 1 then (as
pre-commit's own hooks do), which the step treats as a rewrite folded into it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

_TRAILING = re.compile(rb"[ \t]+(?=\r?\n|\Z)")


def trailing_whitespace(data: bytes) -> bytes:
    return _TRAILING.sub(b"", data)


def end_of_file(data: bytes) -> bytes:
    stripped = data.rstrip(b"\r\n")
    return stripped + b"\n" if stripped else b""


FIXES = {"trailing-whitespace": trailing_whitespace, "end-of-file-fixer": end_of_file}


def fix(fix_id: str, paths: list[str]) -> int:
    changed = 0
    for name in paths:
        path = Path(name)
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:8000]:
            continue  # binary: not text to fix
        fixed = FIXES[fix_id](data)
        if fixed != data:
            path.write_bytes(fixed)
            print(f"Fixing {name}")
            changed += 1
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(fix(sys.argv[1], sys.argv[2:]))
