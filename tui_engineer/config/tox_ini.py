"""tox's configuration read as tox reads it, for the one environment that runs the tests.

Where: `tox.ini`, else `[tox:tox]` and `[testenv…]` of `setup.cfg`, else `[tool.tox]
legacy_tox_ini` of `pyproject.toml`. What:

- the environments: the envlist and every `[testenv:…]` name, generative names expanded
  (`py3{9-14}-tests`, `py{38,39}-{a, b}`); each one's factors are its name's `-` parts;
- the one that runs the tests, chosen by its factors: a `tests`/`test`/`unit` factor first, then
  a Python one (`py`, `py312`, `pypy3`), the one of the Python the tests run with before
  others; never lint, docs, type checks, coverage or the like;
- its `commands` (its own section's, else `[testenv]`'s), as tox filters them: `#` comments
  and `\\` continuations first, then each `factors: line` kept only when the factors match
  (`a,b:` either, `a-b:` both, `!a:` not), then substitutions (`{posargs:…}` its default,
  `{toxinidir}`, `{envpython}`, `{envbindir}`, `{env:X:default}` read from its setenv,
  `{[section]key}`); install lines and `-r` lines are never the tests;
- its `changedir`, honoured as `cd DIR && …`.

What cannot be read with confidence (a substitution only tox can make, no environment that
runs tests) is said, and detection goes on from the files: a wrong command is worse."""

from __future__ import annotations

import configparser
import itertools
import os
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from tui_engineer.base.shell_command import words
from tui_engineer.config.declared import NOT_TESTS, Found, cleaned, runs_tests
from tui_engineer.config.tox_setenv import UNREAD, assignments, exported

# Names of environments that do something other than run the tests (beyond NOT_TESTS).
_NOT_TESTS_TOO = re.compile(
    r"bench|codspeed|changelog|manifest|pyright|typing|publish|upload|spell|audit|pkg|readme|check"
)
_TEST_FACTORS = {"tests", "test", "unit", "unittests", "unittest", "pytest"}
_PYTHON_FACTOR = re.compile(r"^(?:py|pypy|python)(?P<version>\d(?:\.?\d+)?)?t?$")
_BRACES = re.compile(r"\{([^{}]*)\}")
_COMMENT = re.compile(r"\s*(?<!\\)#.*")
_INSTALLS = ("pip", "uv", "pip3")
_MAX_DEPTH = 8  # nested substitutions followed


@dataclass(frozen=True)
class NotRead:
    """tox's configuration is there but says nothing we can run with confidence: why."""

    why: str


def tox(root: Path) -> Found | NotRead | None:
    """The test command of the tox configuration, why it cannot be read, or None (no tox)."""
    loaded = _load(root)
    if loaded is None:
        return None
    parser, where = loaded
    return _Reader(parser, where, _python_version(root)).test_command()


# --- where tox's configuration is --------------------------------------------------------------


def _load(root: Path) -> tuple[configparser.ConfigParser, str] | None:
    for text, where in _sources(root):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys as written
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if where == "setup.cfg":
            if not parser.has_section("tox:tox"):
                continue
        return parser, where
    return None


def _sources(root: Path) -> list[tuple[str, str]]:
    found = []
    for name in ("tox.ini", "setup.cfg"):
        try:
            found.append((_read(root / name), name))
        except OSError:
            pass
    try:
        data = tomllib.loads(_read(root / "pyproject.toml"))
    except (OSError, tomllib.TOMLDecodeError):
        return found
    legacy = data.get("tool", {}).get("tox", {}).get("legacy_tox_ini")
    if isinstance(legacy, str):
        found.append((legacy, "[tool.tox] legacy_tox_ini in pyproject.toml"))
    return found


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _python_version(root: Path) -> str:
    """`312` for the Python the tests run with: the active venv's, the repository's, ours."""
    venvs = [Path(v) for v in (os.environ.get("VIRTUAL_ENV"),) if v]
    venvs += [root / ".venv", root / "venv"]
    for venv in venvs:
        try:
            text = (venv / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        version = re.search(r"^version(?:_info)?\s*=\s*(\d+)\.(\d+)", text, re.M)
        if version:
            return version[1] + version[2]
    return f"{sys.version_info.major}{sys.version_info.minor}"


# --- generative names ---------------------------------------------------------------------------


def expand(value: str) -> list[str]:
    """Every name of an env list or a generative name: `py3{9-11}-{a, b}, lint` →
    py39-a, py39-b, …, lint. A part with an open range (`{10-}`) is left out."""
    names: list[str] = []
    for item in _top_level_split(value):
        choices: list[list[str]] = []
        for part in re.split(r"(\{[^{}]*\})", item):
            if part.startswith("{") and part.endswith("}"):
                choices.append(_alternatives(part[1:-1]))
            else:
                choices.append([part])
        names += ["".join(p).strip() for p in itertools.product(*choices)]
    return [n for n in dict.fromkeys(names) if n and UNREAD not in n]


def _top_level_split(value: str) -> list[str]:
    items, depth, current = [], 0, ""
    for char in value:
        depth += (char == "{") - (char == "}")
        if depth == 0 and char in ",\n":
            items.append(current.strip())
            current = ""
        else:
            current += char
    return [item for item in [*items, current.strip()] if item and not item.startswith("#")]


def _alternatives(inside: str) -> list[str]:
    found = []
    for choice in (c.strip() for c in inside.split(",")):
        span = re.fullmatch(r"(\d+)-(\d*)", choice)
        if span is None:
            found.append(choice)
        elif span[2]:
            found += [str(n) for n in range(int(span[1]), int(span[2]) + 1)]
        else:
            found.append(UNREAD)  # `{10-}`: to the newest Python tox knows
    return found


# --- factor conditions --------------------------------------------------------------------------

# tox 4's: the factors, a colon and a space (`{env:X:pytest}` is no condition).
_CONDITION = re.compile(r"^(?P<head>[\w{}.!,-]+):\s+(?P<rest>.+)$")


def for_env(value: str, factors: set[str]) -> list[str]:
    """The lines of a value that apply to an environment with these factors, as tox 4 filters
    them: comments gone, continuations joined, `factors: line` kept when they match."""
    value = "\n".join(_COMMENT.sub("", line) for line in value.splitlines())
    value = re.sub(r"\\\s*\n", " ", value).replace("\\#", "#")
    kept = []
    for line in value.splitlines():
        condition = _CONDITION.match(line.strip())
        groups = _condition(condition["head"]) if condition else None
        if condition is None or groups is None:
            kept.append(line.strip())
        elif any(all((f in factors) != negated for f, negated in g) for g in groups):
            kept.append(condition["rest"].strip())
    return [line for line in kept if line]


def _condition(head: str) -> list[list[tuple[str, bool]]] | None:
    """`py312,!pypy-tests` → [[(py312, False)], [(pypy, True), (tests, False)]]; None when it
    is no factor condition."""
    if re.sub(r"\{[^{}]*\}", "", head).count("{") or "}" in re.sub(r"\{[^{}]*\}", "", head):
        return None  # unbalanced braces: a substitution, not factors
    groups = []
    for name in expand(head):
        group = [(f.lstrip("!"), f.startswith("!")) for f in name.split("-")]
        if any(not f for f, _ in group):
            return None
        groups.append(group)
    return groups or None


# --- which environment runs the tests (tox.toml's reader shares it) ---------------------------


def not_tests(env: str) -> bool:
    """An environment named for something other than the tests (beyond NOT_TESTS)."""
    return _NOT_TESTS_TOO.search(env) is not None


def env_rank(env: str, root: Path) -> tuple[int, int]:
    """Sort key: a test factor first, then a Python one; the Python the tests run with first."""
    return _rank(env, _python_version(root))


def _rank(env: str, python: str) -> tuple[int, int]:
    factors = env.split("-")
    versions = [m["version"] for f in factors if (m := _PYTHON_FACTOR.match(f))]
    tests = 0 if _TEST_FACTORS & set(factors) else 1 if versions else 2
    mine = any((v or "").replace(".", "") == python for v in versions)
    return tests, 0 if mine else 1


# --- one environment ----------------------------------------------------------------------------


class _Reader:
    def __init__(self, parser: configparser.ConfigParser, where: str, python: str) -> None:
        self.parser = parser
        self.where = where
        self.python = python

    def test_command(self) -> Found | NotRead | None:
        if not any(s == "testenv" or s.startswith("testenv:") for s in self.parser.sections()):
            return None
        unread: NotRead | None = None
        for env in self._candidates():
            found = self._command(env)
            if isinstance(found, NotRead):
                unread = unread or found
            elif found is not None:
                return found
        return unread  # no environment runs the tests: tox is for the project's other checks

    def _candidates(self) -> list[str]:
        main = "tox:tox" if self.where == "setup.cfg" else "tox"
        listed = self._get(main, "env_list", "envlist") or ""
        sections = [s.removeprefix("testenv:") for s in self.parser.sections()]
        names = expand(listed) + [n for s in sections if s != "testenv" for n in expand(s)]
        names = list(dict.fromkeys(names)) or ["py"]
        names = [n for n in names if not NOT_TESTS.search(n) and not _NOT_TESTS_TOO.search(n)]
        return sorted(names, key=self._rank)  # stable: the envlist's order among equals

    def _rank(self, env: str) -> tuple[int, int]:
        return _rank(env, self.python)

    def _section(self, env: str) -> str:
        """The section holding the environment's own settings ([testenv] when none)."""
        if self.parser.has_section(f"testenv:{env}"):
            return f"testenv:{env}"
        for section in self.parser.sections():
            if section.startswith("testenv:") and env in expand(section.removeprefix("testenv:")):
                return section
        return "testenv"

    def _get(self, section: str, *keys: str) -> str | None:
        for key in keys:
            if self.parser.has_option(section, key):
                return self.parser.get(section, key)
        return None

    def _setting(self, env: str, *keys: str) -> tuple[str, str] | None:
        """(section, raw value) of a setting, the environment's own else [testenv]'s."""
        for section in dict.fromkeys((self._section(env), "testenv")):
            if self.parser.has_section(section):
                value = self._get(section, *keys)
                if value is not None:
                    return section, value
        return None

    def _command(self, env: str) -> Found | NotRead | None:
        setting = self._setting(env, "commands")
        if setting is None:
            return None
        section, raw = setting
        factors = set(env.split("-"))
        for written in for_env(raw, factors):
            for line in self._expanded(written, env, factors):
                command = cleaned(line.replace(UNREAD, "X")) if not _installs(line) else None
                if not command or not runs_tests(command) or words(command)[0].endswith(":"):
                    continue
                if UNREAD in line:
                    return NotRead(
                        f"`{written}` of [{section}] in {self.where}: {_braces(written)} "
                        "has no meaning outside tox"
                    )
                return self._found(command, env, section, factors)
        return None

    def _found(self, command: str, env: str, section: str, factors: set[str]) -> Found:
        folder = self._folder(env, factors)
        variables = self._exported(env, factors, command)
        command = f"{assignments(variables)} {command}" if variables else command
        command = f"cd {folder} && {command}" if folder else command
        reason = f"commands of [{section}] in {self.where}"
        reason = reason if env == "py" else f"{reason} for the {env} environment"
        return command, f"{reason}, with its setenv" if variables else reason

    def _exported(self, env: str, factors: set[str], command: str) -> dict[str, str]:
        """What the environment's setenv gives the test process, as tox does: its own values
        (one naming a folder of tox's, or used only to build the commands, is left out)."""
        setting = self._setting(env, "setenv", "set_env")
        if setting is None:
            return {}
        lines = (line.partition("=") for line in for_env(setting[1], factors))
        raw = {key.strip(): value.strip() for key, _, value in lines}
        used = set(re.findall(r"\$(\w+)", command))  # and every `{env:X}` of the file's values
        for section in self.parser.sections():
            for value in self.parser[section].values():
                used |= set(re.findall(r"\{env:([^:}]+)", value))
        return exported(self._setenv(env, factors, 0), raw, used)

    def _lines(self, raw: str, env: str, factors: set[str]) -> list[str]:
        return [one for line in for_env(raw, factors) for one in self._expanded(line, env, factors)]

    def _expanded(self, line: str, env: str, factors: set[str]) -> list[str]:
        """A line substituted: one or more lines (a `{[section]key}` may hold several)."""
        text = self._substitute(line, env, factors, 0)
        return [one.strip() for one in text.splitlines() if one.strip()]

    def _folder(self, env: str, factors: set[str]) -> str:
        setting = self._setting(env, "changedir", "change_dir")
        lines = self._lines(setting[1], env, factors) if setting else []
        folder = lines[0] if lines else ""
        if folder in ("", ".") or UNREAD in folder or folder.startswith("/"):
            return ""  # a temporary folder of tox's: the commands name the repo's paths
        return folder if re.fullmatch(r"[\w./-]+", folder) else ""

    def _substitute(self, text: str, env: str, factors: set[str], depth: int) -> str:
        if depth > _MAX_DEPTH:
            return UNREAD
        text = re.sub(r"(?<!\S)\[\](?!\S)", "", text)  # tox 3's `[]`: the posargs
        text = re.sub(r"\{toxinidir\}/|\{tox_root\}/", "", text)
        text = re.sub(r"\{envbindir\}/|\{env_bin_dir\}/", "", text)
        while True:
            replaced = _BRACES.sub(lambda m: self._one(m[1], env, factors, depth), text)
            if replaced == text:
                return text
            text = replaced

    def _one(self, inside: str, env: str, factors: set[str], depth: int) -> str:
        name, _, default = inside.partition(":")
        fixed = {"toxinidir": ".", "tox_root": ".", "envpython": "python", "env_python": "python",
                 "envname": env, "env_name": env, "/": "/", "": ""}  # fmt: skip
        if inside in fixed:
            return fixed[inside]
        if name == "posargs":
            return default
        if name == "tty":
            return default.partition(":")[2]
        if name == "env":
            variable, _, default = default.partition(":")
            value = self._setenv(env, factors, depth).get(variable)
            return default if value is None else value
        reference = re.fullmatch(r"\[(?P<section>[^\]]*)\](?P<key>.+)", inside)
        if reference:
            section = reference["section"] or self._section(env)
            value = self._get(section, reference["key"])
            if value is not None:
                lines = for_env(value, factors)
                return "\n".join(self._substitute(v, env, factors, depth + 1) for v in lines)
        return UNREAD

    def _setenv(self, env: str, factors: set[str], depth: int) -> dict[str, str]:
        setting = self._setting(env, "setenv", "set_env")
        found: dict[str, str] = {}
        for line in for_env(setting[1], factors) if setting else []:
            key, equals, value = line.partition("=")
            if equals:
                found[key.strip()] = value.strip()
        if depth >= _MAX_DEPTH:
            return found
        return {k: self._substitute(v, env, factors, depth + 1) for k, v in found.items()}


def _braces(line: str) -> str:
    known = ("posargs", "toxinidir", "tox_root", "envpython", "env_python", "envbindir", "env:")
    found = [m[0] for m in _BRACES.finditer(line) if not m[1].startswith(known)]
    return ", ".join(f"`{b}`" for b in found) or "a substitution"


def _installs(line: str) -> bool:
    """An install line (`pip install …`, `python -m pip …`, a `-r`/`-e` requirement line)."""
    stripped = line.strip()
    if re.match(r"^-[rce]\s*\S", stripped):
        return True
    tokens = words(stripped.lstrip("-!").strip())
    if not tokens:
        return False
    if Path(tokens[0]).name in _INSTALLS:
        return True
    return Path(tokens[0]).name.startswith("python") and tokens[1:3] == ["-m", "pip"]
