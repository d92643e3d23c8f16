"""A project's own `runtests.py` that takes test labels and prints unittest's report: Django's
(`cd tests && python runtests.py`, found from its tox.ini) and the Django apps' that hand
`sys.argv` to Django's test runner. Its report is unittest's (read by verify/runners/unittest.py,
parallel workers or not); this module adds what only such a script allows:

- `-v 2` (Django's `--verbosity`), so that each passing test is named: an old failure the step
  fixed shows as fixed, not lost among dots;
- narrowing by the script's own labels: the test modules a change can affect, dotted from the
  script's folder (`runtests.py template_tests.filter_tests.test_capfirst utils_tests.test_text`),
  chosen by name and imports among its `test*.py` files (Django's discovery pattern, so its
  `tests.py` files count), and a test-first step's new test modules alone by theirs. The
  whole suite still runs before review.

It claims only a script it has read that declares labels (an argparse `modules`/`labels`
positional, or `sys.argv[1:]` handed to `run_tests`): another `runtests.py` runs as written,
read by its output."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath

from tui_engineer.base.shell_command import commands, without_assignments
from tui_engineer.verify.related import related_tests
from tui_engineer.verify.runner_result import RunnerResult
from tui_engineer.verify.runners import unittest
from tui_engineer.verify.runners.base import RunReport, no_old_lines

name = "runtests.py"

_SCRIPT = re.compile(r"(?:^|/)runtests\.py$")
_LABELS = re.compile(
    r"add_argument\(\s*[\"'](?:modules|labels|test_labels)[\"']"  # Django's own, and alike
    r"|run_tests\(\s*(?:sys\.argv\[1:\]|\[?\s*sys\.argv\[1:\])"  # apps: run_tests(sys.argv[1:])
)
_VERBOSITY = re.compile(r"add_argument\([^)]*[\"']--verbosity[\"']", re.S)
_SCRIPT_BYTES = 200_000
# Django discovers `test*.py`: `tests.py` and `test_x.py`.
_TEST_FILE = re.compile(r"^test\w*\.py$")


def _parts(command: str) -> tuple[str, list[str]] | None:
    """(folder it runs in, the script command's words) of `[cd DIR &&] python DIR/runtests.py
    …`, or None (another shape: run as written)."""
    found = commands(command)
    if command.count("&&") != len(found) - 1 or not 1 <= len(found) <= 2:
        return None  # `;`, `|`, `||`: not a shape we add words to
    folder = "."
    if len(found) == 2:
        if len(found[0]) != 2 or found[0][0] != "cd":
            return None
        folder = found[0][1]
    script = without_assignments(found[-1])
    if len(script) < 2 or not Path(script[0]).name.startswith("python"):
        return None
    if not _SCRIPT.search(script[1]) or any(w in {">", "<", ">>", "2>&1"} for w in script):
        return None
    return folder, script


def _script(command: str, root: Path | None) -> Path | None:
    parts = _parts(command)
    if parts is None or root is None:
        return None
    folder, script = parts
    path = (root / folder / script[1]).resolve()
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return None
    return path if path.is_file() else None


def _text(script: Path) -> str:
    try:
        with script.open("rb") as handle:
            return handle.read(_SCRIPT_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def claims(command: str, root: Path | None = None) -> bool:
    """A `runtests.py` under the repository that takes test labels."""
    script = _script(command, root)
    return script is not None and _LABELS.search(_text(script)) is not None


def report_command(command: str, _report: Path | None = None, root: Path | None = None) -> str:
    """`command` with `-v 2` when the script takes Django's --verbosity and none is given."""
    script = _script(command, root)
    parts = _parts(command)
    if script is None or parts is None or not _VERBOSITY.search(_text(script)):
        return command
    if any(w in ("-v", "--verbosity") or re.fullmatch(r"-v\d|--verbosity=\d", w) for w in parts[1]):
        return command
    return f"{command} -v 2"


def read(output: str, root: Path | None) -> RunnerResult | None:
    found = unittest.read(output, root)
    if found is not None:
        found.runner = name
    return found


def read_report(_report: Path, _root: Path | None) -> RunnerResult | None:
    return None  # read from its output


def narrows(command: str, root: Path | None) -> bool:
    return claims(command, root)


def narrowed(
    command: str, changed: Iterable[str], root: Path, files: Callable[..., list[str]]
) -> str | None:
    """`command` with the labels of the test modules `changed` can affect, or None (run it
    whole: nothing found, or a test module outside the script's folder)."""
    script = _script(command, root)
    parts = _parts(command)
    if script is None or parts is None or _given_labels(parts[1]):
        return None  # the user's own selection: leave it
    home = PurePosixPath(script.parent.relative_to(root.resolve()).as_posix())
    tests = [f for f in files() if _in_home(f, home) and _TEST_FILE.match(PurePosixPath(f).name)]
    chosen = related_tests(root, set(changed), tests, is_test=_is_test)
    labels = [_label(f, home) for f in chosen if _in_home(f, home)]
    return f"{command} {' '.join(sorted(labels))}" if labels else None


def _given_labels(script: list[str]) -> bool:
    """Does the command already name labels (a word after the script that is no option)?"""
    rest = script[2:]
    takes_value = {"-v", "--verbosity", "--settings", "--parallel", "--bisect", "--pair"}
    for index, word in enumerate(rest):
        if word.startswith("-"):
            continue
        if index and rest[index - 1] in takes_value:
            continue
        return True
    return False


def _is_test(path: str) -> bool:
    return _TEST_FILE.match(PurePosixPath(path).name) is not None


def _in_home(path: str, home: PurePosixPath) -> bool:
    return str(home) == "." or PurePosixPath(path).is_relative_to(home)


def _label(path: str, home: PurePosixPath) -> str:
    """`tests/template_tests/filter_tests/test_capfirst.py` → `template_tests.filter_tests.
    test_capfirst` (from the script's folder `tests`)."""
    relative = PurePosixPath(path) if str(home) == "." else PurePosixPath(path).relative_to(home)
    return ".".join(relative.with_suffix("").parts)


def files_command(command: str, root: Path, files: Iterable[str]) -> str | None:
    """`command` running only the test modules `files` (a test-first step's new tests), by
    their labels; None when one is outside the script's folder or the command names labels."""
    script = _script(command, root)
    parts = _parts(command)
    if script is None or parts is None or _given_labels(parts[1]):
        return None
    home = PurePosixPath(script.parent.relative_to(root.resolve()).as_posix())
    wanted = [f for f in files if f.endswith(".py")]
    if not wanted or not all(_in_home(f, home) for f in wanted):
        return None
    return f"{command} {' '.join(sorted(_label(f, home) for f in wanted))}"


started = unittest.started


def start_problem(report: RunReport) -> str | None:
    return None  # a crash is read by verify/crashes.py; no tests found shows in its exit code


old_lines = no_old_lines  # unittest's module drops them (its reader is the one that read them)
