"""Two more places a project declares how its tests run (beside config/tox_ini.py's tox.ini and
pyproject scripts and Makefile): a nox session that runs them, and a CI workflow step that does.

- noxfile.py is read, never run (it is the repository's code): its `@nox.session` functions
  whose `session.run(...)` is a test command written as plain strings (`*session.posargs`
  dropped). A session named `tests` (or `test`) is taken first, then the first other one that
  is not lint, docs or the like.
- .github/workflows/*.yml: the `run:` lines of the steps (one line, or each line of a `|`
  block), the first that is a test command (a runner, or a script named for tests) with no
  `${{ … }}` expression in it. `make test`, tox and nox themselves are left to the sources that
  read what they run. Read line by line (no YAML library): a step written any other way is not
  found, and the next source decides.

Each command is cleaned as config/declared.py cleans a declared one (`{posargs}`, coverage and
pytest-cov's options gone) and taken only when it clearly runs tests."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path

from tui_engineer.base.shell_command import words
from tui_engineer.config.declared import NOT_TESTS, Found, cleaned, runs_tests

_TEST_SESSIONS = ("tests", "test")
MAX_BYTES = 256_000  # a larger noxfile or workflow is not read


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# --- noxfile.py --------------------------------------------------------------------------------


def noxfile(root: Path) -> Found | None:
    """The test command of the noxfile's test session."""
    text = _read(root / "noxfile.py")
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    sessions = [(name, command) for name, command in _sessions(tree) if not NOT_TESTS.search(name)]
    sessions.sort(key=lambda found: found[0] not in _TEST_SESSIONS)  # stable: tests first
    for name, command in sessions:
        return command, f"the {name} session in noxfile.py"
    return None


def _sessions(tree: ast.Module) -> list[tuple[str, str]]:
    """(session name, its first test command) of each nox session that runs tests."""
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        name = _session_name(node)
        if name is None:
            continue
        for call in ast.walk(node):
            command = _run_command(call)
            if command is not None:
                found.append((name, command))
                break
    return found


def _session_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The session's name when `function` is decorated as a nox session, else None."""
    for decorator in function.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        if ast.unparse(target) not in ("nox.session", "session", "nox.session.parametrize"):
            continue
        for keyword in call.keywords if call is not None else []:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
        return function.name
    return None


def _run_command(node: ast.AST) -> str | None:
    """The test command of a `session.run("pytest", "-q", *session.posargs)` call."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr != "run":
        return None
    args = []
    for arg in node.args:
        if isinstance(arg, ast.Starred) and "posargs" in ast.unparse(arg):
            continue  # what the user passes on the command line
        if not isinstance(arg, ast.Constant) or not isinstance(arg.value, str):
            return None  # built at run time: not a command we can read
        args.append(arg.value)
    if not args:
        return None
    command = cleaned(shlex.join(args))
    return command if command and runs_tests(command) else None


# --- .github/workflows ------------------------------------------------------------------------

_RUN = re.compile(r"^\s*(?:-\s+)?run:\s*(?P<value>.*?)\s*$")
_SKIPPED = {"make", "tox", "nox"}


def workflows(root: Path) -> Found | None:
    """The first test command a CI workflow's step runs."""
    folder = root / ".github" / "workflows"
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))
    except OSError:
        return None
    for path in files:
        text = _read(path)
        for line in _run_lines(text or ""):
            command = cleaned(line)
            if command and runs_tests(command) and words(command)[0] not in _SKIPPED:
                return command, f"a step of .github/workflows/{path.name}"
    return None


def _run_lines(text: str) -> list[str]:
    """The command lines of every `run:` in a workflow, in order."""
    found: list[str] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        run = _RUN.match(line)
        if run is None:
            continue
        value = run["value"]
        if value and value[0] not in "|>":
            found.append(value.strip("'\""))
            continue
        key = line.index("run:")  # a block's lines are indented deeper than its key
        for more in lines[index + 1 :]:
            if more.strip() and len(more) - len(more.lstrip()) <= key:
                break
            found.append(more.strip())
    return [line for line in found if line and not line.startswith("#") and "${{" not in line]
