"""Two more places a project declares how its tests run (beside config/tox_ini.py's tox.ini and
pyproject scripts and Makefile): a nox session that runs them, and a CI workflow step that does.

- noxfile.py is read, never run (it is the repository's code): its `@nox.session` functions
  whose `session.run(...)` is a test command written plainly: strings, names assigned a string
  or a list of them (in the module or the function), f-strings of those, `*session.posargs`
  dropped and `session.posargs or [default]` read as its default, a `@nox.parametrize`
  parameter as its first value (the session then named as nox names it, `tests(suite='unit')`).
  A session named `tests` (or `test`) is taken first, then the first other one that is not
  lint, docs or the like.
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
    sessions.sort(key=lambda found: found[0].partition("(")[0] not in _TEST_SESSIONS)  # stable
    for name, command in sessions:
        return command, f"the {name} session in noxfile.py"
    return None


Words = list[str]


def _sessions(tree: ast.Module) -> list[tuple[str, str]]:
    """(session name, its first test command) of each nox session that runs tests; a session
    whose command uses a parameter is named as nox names it: `tests(suite='unit')`."""
    constants = _names(tree.body, {})
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        name = _session_name(node)
        if name is None:
            continue
        parameters = _parameters(node)
        known = _names(node.body, {**constants, **parameters})
        for call in ast.walk(node):
            command, used = _run_command(call, known, set(parameters))
            if command is not None:
                shown = ", ".join(f"{p}={parameters[p][0]!r}" for p in parameters if p in used)
                found.append((f"{name}({shown})" if shown else name, command))
                break
    return found


def _names(body: list[ast.stmt], known: dict[str, Words]) -> dict[str, Words]:
    """What plain names hold where they are assigned once, plainly: a string, a list or tuple
    of strings, or `session.posargs or [default]` (the default: what runs with no posargs)."""
    found = dict(known)
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            words_of = _words(statement.value, found)
            if isinstance(target, ast.Name) and words_of is not None:
                found[target.id] = words_of
    return found


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Words]:
    """The first value of each `@nox.parametrize("name", [values])` (nox runs each; the first
    that is not lint, docs or the like stands for them)."""
    found: dict[str, Words] = {}
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call) or len(decorator.args) < 2:
            continue
        if ast.unparse(decorator.func) not in ("nox.parametrize", "parametrize"):
            continue
        names, values = decorator.args[0], decorator.args[1]
        if not isinstance(names, ast.Constant) or not isinstance(values, ast.List | ast.Tuple):
            continue
        keys = [k.strip() for k in str(names.value).split(",")]
        for value in values.elts:
            row = value.elts if isinstance(value, ast.Tuple) and len(keys) > 1 else [value]
            texts = [str(v.value) for v in row if isinstance(v, ast.Constant)]
            if len(texts) == len(keys) and not any(NOT_TESTS.search(t) for t in texts):
                found.update({k: [t] for k, t in zip(keys, texts, strict=True)})
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


def _run_command(
    node: ast.AST, known: dict[str, Words], parameters: set[str]
) -> tuple[str | None, set[str]]:
    """The test command of a `session.run("pytest", "-q", *session.posargs)` call, and the
    parameters it uses."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None, set()
    if node.func.attr != "run":
        return None, set()
    args: Words = []
    for arg in node.args:
        value = arg.value if isinstance(arg, ast.Starred) else arg
        got = _words(value, known)
        if got is None:
            return None, set()  # built at run time: not a command we can read
        args += got
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in parameters}
    if not args:
        return None, set()
    command = cleaned(shlex.join(args))
    return (command if command and runs_tests(command) else None), used


def _words(node: ast.expr, known: dict[str, Words]) -> Words | None:
    """The words an expression stands for, when it is written plainly; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.Attribute) and node.attr == "posargs":
        return []  # what the user passes on the command line
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2:
        first, default = node.values
        if isinstance(first, ast.Attribute) and first.attr == "posargs":
            return _words(default, known)  # `session.posargs or ["tests"]`: its default
        return None
    if isinstance(node, ast.List | ast.Tuple):
        parts = [_words(e, known) for e in node.elts]
        if any(p is None or len(p) != 1 for p in parts):
            return None
        return [p[0] for p in parts if p]
    if isinstance(node, ast.JoinedStr):  # f"tests/{suite}" with a known single word
        text = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                text += str(part.value)
                continue
            if not isinstance(part, ast.FormattedValue) or part.format_spec or part.conversion > 0:
                return None
            value = _words(part.value, known)
            if value is None or len(value) != 1:
                return None
            text += value[0]
        return [text]
    return None


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
