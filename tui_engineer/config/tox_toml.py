"""tox 4's TOML configuration (`tox.toml`, or `[tool.tox]` of `pyproject.toml` without
`legacy_tox_ini`) read for the test command, as config/tox_ini.py reads tox.ini:

- the environments: `env_list` and every `[env.NAME]`; the one that runs the tests chosen by
  the same factors (a `tests`/`test` one first, then a Python one: `py312`, `3.12`), never lint,
  docs, type checks and the like;
- its `commands` (its own `[env.NAME]`'s, else `[env_run_base]`'s): each a list of words, where
  `{replace = "posargs", default = […]}` becomes its default, `{replace = "env", name = X,
  default = …}` the value its `set_env` gives X (else the default), `{replace = "ref", of =
  [table, key]}` that setting's words; `{tox_root}` is the repository, `{env_python}` python;
- its `change_dir` (`cd DIR && …`) and `set_env` (passed to the command, as tox does).

What cannot be read with confidence says why (a substitution only tox can make); no file, or
no environment that runs tests, is None: detection goes on from the files."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from tui_engineer.config.declared import NOT_TESTS, Found, cleaned, runs_tests
from tui_engineer.config.tox_ini import NotRead, env_rank, not_tests
from tui_engineer.config.tox_setenv import UNREAD, assignments, exported

_FIXED = {"tox_root": ".", "toxinidir": ".", "env_python": "python", "envpython": "python",
          "/": "/", ":": ":"}  # fmt: skip
_MAX_DEPTH = 8


def tox_toml(root: Path) -> Found | NotRead | None:
    """The test command of tox's TOML configuration, why it cannot be read, or None."""
    for config, where in _sources(root):
        if isinstance(config.get("env_run_base"), dict) or isinstance(config.get("env"), dict):
            return _Reader(config, where).test_command(root)
    return None


def _sources(root: Path) -> list[tuple[dict[str, Any], str]]:
    found = []
    for name in ("tox.toml", "pyproject.toml"):
        try:
            data = tomllib.loads((root / name).read_text(encoding="utf-8", errors="replace"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        if name == "tox.toml":
            found.append((data, "tox.toml"))
            continue
        tox = data.get("tool", {}).get("tox", {})
        if isinstance(tox, dict) and "legacy_tox_ini" not in tox:
            found.append((tox, "[tool.tox] in pyproject.toml"))
    return found


class _Reader:
    def __init__(self, config: dict[str, Any], where: str) -> None:
        self.config = config
        self.where = where
        envs = config.get("env", {})
        self.envs: dict[str, Any] = envs if isinstance(envs, dict) else {}

    def test_command(self, root: Path) -> Found | NotRead | None:
        unread: NotRead | None = None
        for env in self._candidates(root):
            found = self._command(env)
            if isinstance(found, NotRead):
                unread = unread or found
            elif found is not None:
                return found
        return unread

    def _candidates(self, root: Path) -> list[str]:
        listed = self.config.get("env_list", [])
        names = [str(n) for n in listed] if isinstance(listed, list) else []
        names = list(dict.fromkeys(names + list(self.envs))) or ["py"]
        names = [n for n in names if not NOT_TESTS.search(n) and not not_tests(n)]
        return sorted(names, key=lambda env: env_rank(_as_factors(env), root))

    def _setting(self, env: str, key: str) -> tuple[str, Any] | None:
        """(table name, value) of a setting: the environment's own, else env_run_base's."""
        tables = ((f"env.{env}", self.envs.get(env)), ("env_run_base", self._base()))
        for table, values in tables:
            if isinstance(values, dict) and key in values:
                return table, values[key]
        return None

    def _command(self, env: str) -> Found | NotRead | None:
        setting = self._setting(env, "commands")
        if setting is None or not isinstance(setting[1], list):
            return None
        table, commands = setting
        set_env = self._set_env(env)
        for entry in commands:
            parts = self._words(entry, set_env, 0)
            if parts is None or not parts:
                continue
            line = shlex.join(parts)
            command = cleaned(line.replace(UNREAD, "X"))
            if not command or not runs_tests(command) or _installs(parts):
                continue
            if UNREAD in line:
                return NotRead(f"a command of [{table}] in {self.where} has a substitution "
                               "that has no meaning outside tox")  # fmt: skip
            return self._found(command, env, table, set_env)
        return None

    def _found(self, command: str, env: str, table: str, set_env: dict[str, str]) -> Found:
        raw = {k: str(v) for k, v in self._raw_set_env(env).items()}
        used = set(re.findall(r"\$(\w+)", command)) | self._env_references()
        variables = exported(set_env, raw, used)
        command = f"{assignments(variables)} {command}" if variables else command
        folder = self._folder(env, set_env)
        command = f"cd {folder} && {command}" if folder else command
        reason = f"commands of [{table}] in {self.where} for the {env} environment"
        return command, f"{reason}, with its set_env" if variables else reason

    def _folder(self, env: str, set_env: dict[str, str]) -> str:
        setting = self._setting(env, "change_dir")
        if setting is None:
            return ""
        folder = self._text(setting[1], set_env, 0)
        if not folder or folder in (".", UNREAD) or UNREAD in folder or folder.startswith("/"):
            return ""
        return folder if re.fullmatch(r"[\w./-]+", folder) else ""

    def _base(self) -> dict[str, Any]:
        base = self.config.get("env_run_base")
        return base if isinstance(base, dict) else {}

    def _raw_set_env(self, env: str) -> dict[str, Any]:
        """set_env of env_run_base, overridden by the environment's own."""
        own = self.envs.get(env)
        merged: dict[str, Any] = {}
        for table in (self._base(), own if isinstance(own, dict) else {}):
            values = table.get("set_env")
            merged |= values if isinstance(values, dict) else {}
        return merged

    def _set_env(self, env: str) -> dict[str, str]:
        found = {}
        for key, value in self._raw_set_env(env).items():
            text = self._text(value, {}, 1)
            if text is not None:
                found[str(key)] = text
        return found

    def _env_references(self) -> set[str]:
        """Variables a `{replace = "env"}` or `{env:X}` reads: tox builds commands with them."""
        text = repr(self.config)
        named = set(re.findall(r"'replace': 'env', 'name': '(\w+)'", text))
        return named | set(re.findall(r"\{env:([^:}]+)", text))

    # --- values ---------------------------------------------------------------------------

    def _words(self, entry: Any, set_env: dict[str, str], depth: int) -> list[str] | None:
        """One command's words, substituted; None when it is no list of words."""
        if isinstance(entry, str):
            text = self._text(entry, set_env, depth)
            return shlex.split(text) if text else []
        if not isinstance(entry, list):
            return None
        found: list[str] = []
        for item in entry:
            if isinstance(item, dict):
                found += self._replaced(item, set_env, depth)
            elif isinstance(item, str | int | float):
                found.append(self._text(str(item), set_env, depth) or "")
            else:
                return None
        return [w for w in found if w != ""]

    def _replaced(self, item: dict[str, Any], set_env: dict[str, str], depth: int) -> list[str]:
        kind = item.get("replace")
        default = item.get("default", [])
        if kind == "posargs":  # its default may hold replacements of its own
            words = self._words(default if isinstance(default, list) else [default], set_env, depth)
            return words if words is not None else [UNREAD]
        if kind == "env":
            value = set_env.get(str(item.get("name")))
            return [value if value is not None else str(default or "")]
        if kind == "ref" and depth < _MAX_DEPTH:
            of = item.get("of", [])
            value = self._lookup(of)
            if isinstance(value, list):
                return [
                    w for entry in value for w in (self._words(entry, set_env, depth + 1) or [])
                ]
        return [UNREAD]

    def _lookup(self, path: Any) -> Any:
        value: Any = self.config
        for key in path if isinstance(path, list) else []:
            value = value.get(str(key)) if isinstance(value, dict) else None
        return value

    def _text(self, value: Any, set_env: dict[str, str], depth: int) -> str | None:
        """A string with its `{…}` substituted (`{posargs}` gone, `{tox_root}` the repo)."""
        if not isinstance(value, str | int | float):
            return None
        text = re.sub(r"\{tox_root\}/|\{toxinidir\}/", "", str(value))

        def one(match: re.Match[str]) -> str:
            inside = match[1]
            name, _, default = inside.partition(":")
            if inside in _FIXED:
                return _FIXED[inside]
            if name == "posargs":
                return default
            if name == "env":
                variable, _, fallback = default.partition(":")
                return set_env.get(variable, fallback)
            return UNREAD

        return re.sub(r"\{([^{}]*)\}", one, text)


def _as_factors(env: str) -> str:
    """`3.12` → `py312`: tox 4 names a Python environment either way."""
    return re.sub(r"^(\d)\.(\d+)$", r"py\1\2", env)


def _installs(parts: list[str]) -> bool:
    program = Path(parts[0]).name if parts else ""
    return program in ("pip", "pip3", "uv") or parts[1:3] == ["-m", "pip"]
