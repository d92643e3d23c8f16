"""Tests related to changed files by name or by import: the affected set when no coverage data
is available (pytest-testmon missing from the test environment, or a docker sandbox).

A test file is related to a changed module `pkg/calc.py` when it is named for it
(`test_calc.py`, `calc_test.py`) or imports it (`import calc`, `from pkg.calc import …`,
`from pkg import calc`). A changed test file is related to itself."""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

# Reading every test file is the cost of this fallback: skip absurdly big ones.
MAX_TEST_FILE_BYTES = 512_000
_IMPORT_STARTS = ("import", "from")


# `is_test_file`'s names as git pathspecs (`*` stops at a slash; `**/` is any folder, or none).
TEST_FILE_PATHSPECS = (":(glob)**/test_*.py", ":(glob)**/*_test.py")


def is_test_file(path: str) -> bool:
    """Named as pytest collects by default. String operations: it runs on every file of the
    tree for each attempt (PurePosixPath took 0.09 s at 40,000 files)."""
    name = path.rpartition("/")[2]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def module_names(path: str) -> set[str]:
    """Dotted names a Python file can be imported as: `src/pkg/calc.py` → pkg.calc, calc, …
    (every suffix of its path, since the import root is not known)."""
    pure = PurePosixPath(path)
    if pure.suffix != ".py":
        return set()
    parts = list(pure.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return {".".join(parts[i:]) for i in range(len(parts)) if parts[i:]}


def imports_module(text: str, names: set[str]) -> bool:
    return _import_pattern(frozenset(names)).search(text) is not None


@functools.lru_cache(maxsize=64)
def _import_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """One pattern for all of `names`: `import name`, `from name import`, and `from package
    import … last` for a dotted name; each at a line's start."""
    ways = []
    for name in sorted(names):
        *package, last = name.split(".")
        ways += [rf"import\s+{re.escape(name)}\b", rf"from\s+{re.escape(name)}\s+import\b"]
        if package:
            ways.append(rf"from\s+{re.escape('.'.join(package))}\s+import\s+.*\b{last}\b")
    return re.compile(rf"^\s*(?:{'|'.join(ways) or '(?!)'})", re.MULTILINE)


def related_tests(
    root: Path,
    changed: Iterable[str],
    files: Iterable[str],
    is_test: Callable[[str], bool] = is_test_file,
) -> list[str]:
    """The test files among `files` (paths relative to `root`) related to `changed`. `is_test`:
    what a test file is (a runner's own pattern: Django's `test*.py` takes `tests.py` too)."""
    changed = [c for c in changed if c.endswith(".py")]
    tests = [f for f in files if is_test(f)]
    chosen = {c for c in changed if is_test(c) and (root / c).is_file()}
    stems = {PurePosixPath(c).stem for c in changed if not is_test(c)}
    names = set().union(*(module_names(c) for c in changed if not is_test(c)))
    for test in tests:
        stem = test.rpartition("/")[2].removesuffix(".py")  # a test file's name ends so
        if stem.removeprefix("test_") in stems or stem.removesuffix("_test") in stems:
            chosen.add(test)
            continue
        text = _import_lines(root / test) if names else None
        if text and imports_module(text, names):
            chosen.add(test)
    return sorted(chosen)


# path → (size, mtime, its import lines): a session's later attempts and steps read only the
# test files that changed (at 40,000 files, reading 2,000 test files took 0.05 s an attempt).
_read: dict[str, tuple[int, int, str]] = {}
_read_guard = threading.Lock()
READ_KEPT = 50_000  # files remembered (each shadow's are its own), then forgotten at once
# A file written this recently may be written again with the same size within the file
# system's timestamp tick (git's "racily clean"): read, not remembered.
RACY_NS = 100_000_000


def _import_lines(path: Path) -> str | None:
    """The lines of a test file that may import (all `imports_module` matches: each of its
    patterns starts a line with `import` or `from`); None when unreadable or too big."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    if stat.st_size > MAX_TEST_FILE_BYTES:
        return None
    key = str(path)
    with _read_guard:
        known = _read.get(key)
    if known is not None and known[:2] == (stat.st_size, stat.st_mtime_ns):
        return known[2]
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = "\n".join(ln for ln in text.split("\n") if ln.lstrip().startswith(_IMPORT_STARTS))
    if time.time_ns() - stat.st_mtime_ns < RACY_NS:
        return lines
    with _read_guard:
        if len(_read) >= READ_KEPT:
            _read.clear()
        _read[key] = (stat.st_size, stat.st_mtime_ns, lines)
    return lines
