"""The test command a project declares for its own tools (tox's commands: config/tox_ini.py),
a test script in pyproject.toml (hatch, pdm, poe), the recipe of a Makefile's `test` target.
Read before any guess from file names, because the project says there how its tests run
(Django's tox.ini runs `tests/runtests.py`, not pytest, though it also has a package.json).

A declared command is taken only when it clearly runs tests (a test runner, or a script named
for tests) and is one command once the tool's own parts are removed: `{posargs}` and `{args}`
dropped, `{envpython}` read as `python`, `coverage run -m X` as `python -m X`, pytest-cov's
`--cov…` options dropped (the project's own environment may not have them). Anything less
clear is left to the next source: a wrong guess would run something that is not the tests."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from tui_engineer.base.shell_command import python_module, words

Found = tuple[str, str]  # (command, reason)

_TEST_MODULES = {"pytest", "unittest", "nose2", "trial", "django"}
_TEST_PROGRAMS = {"pytest", "py.test", "nose2", "trial"}
_SCRIPT_KEYS = ("test", "tests")
# tox environments that are not the tests.
NOT_TESTS = re.compile(r"lint|flake|mypy|type|doc|format|style|pre-commit|build|release|cov")


def runs_tests(command: str) -> bool:
    """Does this simple command run a project's tests (a runner, or a script named for them)?"""
    tokens = words(command)
    if not tokens:
        return False
    module = python_module(tokens)
    program = Path(tokens[0]).name
    if module is not None:
        return module.split(".")[0] in _TEST_MODULES
    if program in _TEST_PROGRAMS:
        return True
    if tokens[:2] in (["cargo", "test"], ["go", "test"]) or tokens[:2] == ["make", "test"]:
        return True
    script = tokens[1] if program.startswith("python") and len(tokens) > 1 else tokens[0]
    if Path(script).name == "manage.py":
        return "test" in tokens[2:3]
    return "test" in script.lower() and not script.startswith("-")  # tests/run_all.py


def cleaned(command: str) -> str | None:
    """The command as we run it, or None when it is not one clear command."""
    command = command.strip().lstrip("-!").strip()
    tokens = words(command)
    if not tokens:
        return None
    if Path(tokens[0]).name == "coverage" and tokens[1:2] == ["run"]:
        tokens = _without_coverage(tokens)
        if tokens is None:
            return None
    if python_module(tokens) == "pytest" or Path(tokens[0]).name in _TEST_PROGRAMS:
        tokens = _without_cov_options(tokens)
    return shlex.join(tokens)


def _without_coverage(tokens: list[str]) -> list[str] | None:
    """`coverage run [options] -m pytest …` → `python -m pytest …`; a script likewise."""
    rest = tokens[2:]
    while rest and rest[0].startswith("-") and rest[0] != "-m":
        rest = rest[1:]  # coverage's own options, all written --name=value
    if not rest:
        return None
    return ["python", *rest]


def _without_cov_options(tokens: list[str]) -> list[str]:
    kept: list[str] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        if token.startswith("--cov"):
            skip = token in ("--cov-report", "--cov-config", "--cov-fail-under")
            continue
        kept.append(token)
    return kept


# --- tox.ini: config/tox_ini.py ---------------------------------------------------------------

_ARGS = re.compile(r"\{args(?::(?P<default>[^}]*))?\}")  # hatch's


# --- pyproject.toml: hatch, pdm and poe scripts -----------------------------------------------


def pyproject_script(root: Path) -> Found | None:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    tables = (
        (_dig(tool, "hatch", "envs", "default", "scripts"), "[tool.hatch.envs.default.scripts]"),
        (_dig(tool, "pdm", "scripts"), "[tool.pdm.scripts]"),
        (_dig(tool, "poe", "tasks"), "[tool.poe.tasks]"),
    )
    for table, where in tables:
        for key in _SCRIPT_KEYS:
            command = _script_command(table.get(key))
            if command:
                return command, f"the {key} script in {where} of pyproject.toml"
    return None


def _dig(data: dict[str, object], *keys: str) -> dict[str, object]:
    for key in keys:
        found = data.get(key)
        data = found if isinstance(found, dict) else {}
    return data


def _script_command(value: object) -> str | None:
    """A script's test command: a string, hatch's list of commands, or pdm's and poe's
    {cmd = …} (a string or a list of words) / {shell = …}; one of them must run tests."""
    if isinstance(value, dict):
        value = value.get("cmd", value.get("shell"))
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = shlex.join(value)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    lines = [_ARGS.sub(lambda m: m["default"] or "", line) for line in value]
    tests = [c for c in map(cleaned, lines) if c and runs_tests(c)]
    return tests[0] if len(tests) == 1 else None


# --- Makefile: the recipe of the test target --------------------------------------------------

_ASSIGN = re.compile(r"^(?P<name>[A-Za-z_][\w.]*)\s*(?:\?|:|::)?=\s*(?P<value>.*?)\s*$")
_VARIABLE = re.compile(r"\$[({](?P<name>[A-Za-z_][\w.]*)[)}]")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")


def makefile_recipe(root: Path) -> Found | None:
    """The one command of a `test:` target that has no prerequisites, when it runs tests."""
    for name in MAKEFILES:
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        recipe = _recipe(text, "test")
        if recipe is None or len(recipe) != 1:
            return None
        command = _expand(recipe[0].lstrip("@-+ \t"), _variables(text))
        command = cleaned(command) if command else None
        if command and runs_tests(command) and words(command)[:2] != ["make", "test"]:
            return command, f"the test target of {name}"
        return None
    return None


def _recipe(text: str, target: str) -> list[str] | None:
    lines = text.splitlines()
    for index, line in enumerate(lines):
        head = re.match(rf"^{re.escape(target)}\s*:(?![=:])(?P<needs>[^#;]*)", line)
        if head is None:
            continue
        if head["needs"].strip():
            return None  # prerequisites build or install something first: run it whole
        recipe = []
        for more in lines[index + 1 :]:
            if not more.startswith("\t"):
                if more.strip() and not more.lstrip().startswith("#"):
                    break
                continue
            body = more.strip()
            if body and not body.startswith("#") and not body.lstrip("@").startswith("echo"):
                recipe.append(body)
        return recipe
    return None


def _variables(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        assign = _ASSIGN.match(line)
        if assign:
            found.setdefault(assign["name"], assign["value"])
    return found


def _expand(command: str, variables: dict[str, str]) -> str | None:
    for _ in range(5):
        expanded = _VARIABLE.sub(lambda m: variables.get(m["name"], m.group(0)), command)
        if expanded == command:
            break
        command = expanded
    return None if "$" in command else command
