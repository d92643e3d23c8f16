"""Read each configuration layer into {key: (value, source description)}, validated."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from tui_engineer.config.fields import (
    FIELDS,
    UNSET,
    coerce_value,
    normalize_key,
    parse_text,
    unknown,
)
from tui_engineer.config.mcp_servers import TABLE as MCP_TABLE
from tui_engineer.config.settings import ConfigError

Layer = dict[str, tuple[object, str]]

REPO_FILE = ".tui-engineer.toml"
PYPROJECT_TABLE = "tui-engineer"
ENV_PREFIX = "TUI_ENGINEER_"


def flag_name(key: str) -> str:
    """The CLI's spelling of a setting's flag (for messages and sources)."""
    flag = FIELDS[key].flag if key in FIELDS else None
    return flag.name if flag is not None else "--" + key.replace("_", "-")


def read_toml(path: Path) -> dict[str, object] | None:
    """Parse a TOML file; None when it does not exist. Problems name the file (and line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read this config file ({err.strerror})") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; TOML files must be UTF-8") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(_syntax_message(path, str(err))) from None


def _syntax_message(path: Path, message: str) -> str:
    found = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if found:
        reason = message[: found.start()]
        return f"{path}, line {found[1]}: invalid TOML: {reason} (column {found[2]})"
    reason = message.replace(" (at end of document)", "")
    return f"{path}: invalid TOML at the end of the file: {reason}"


def table_layer(table: Mapping[str, object], origin: str, *, user_path: Path | None) -> Layer:
    """Validate a TOML table of settings; `origin` names the file (and table) in messages.

    `user_path` is None for the user's own file; otherwise the table is a repo's and may not
    hold api_key (the message points at `user_path` instead).
    """
    layer: Layer = {}
    for raw_key, value in table.items():
        key = normalize_key(raw_key)
        if key == MCP_TABLE:
            continue  # not a setting: read by config/mcp_servers.py (user config only)
        if key not in FIELDS:
            raise unknown(raw_key, origin, FIELDS)
        if key in layer:
            raise ConfigError(f"{origin}: {key} is set twice (one spelling with '-', one with '_')")
        if user_path is not None:
            _refuse_in_repo(key, value, origin, user_path)
        layer[key] = (coerce_value(FIELDS[key], value, origin), origin)
    return layer


def user_config_path() -> Path:
    """Where the user's own config file lives (it may not exist)."""
    return platformdirs.user_config_path("tui-engineer") / "config.toml"


def _refuse_in_repo(key: str, value: object, origin: str, user_path: Path) -> None:
    """A setting that is yours only (its declaration's `yours`), in a repository's config: a
    cloned repository may not widen what its tests may do, or choose where your key goes."""
    yours = FIELDS[key].yours
    if yours is None or (yours.values and value not in yours.values):
        return
    shown = f"{key} = {value!r}" if yours.values and not isinstance(value, bool) else key
    raise ConfigError(
        f"{origin}: {shown} must not be set in a repository's config file — {yours.why}. "
        f"Remove it, then {_how(key, value, yours.how, user_path)}"
    )


def _how(key: str, value: object, how: str, user_path: Path) -> str:
    """Where you set it instead: the declaration's `how`, else its flag and variable (with the
    refused value, when only some values are refused) and your user config."""
    if how.endswith(" in"):  # "put api_key in": the user config ends it
        return f"{how} your user config {user_path}"
    if how:
        return f"set it yourself with {how} or in your user config {user_path}"
    spec = FIELDS[key]
    specific = bool(spec.yours and spec.yours.values)
    shown = ("true" if value is True else str(value)) if specific else ""
    ways = []
    if spec.flag is not None:
        takes_value = spec.flag.const is None and specific
        ways.append(spec.flag.name + (f" {shown}" if takes_value else ""))
    ways.append(env_var(key) + (f"={shown}" if specific else ""))
    return f"set it yourself with {', '.join(ways)} or your user config {user_path}"


def repo_layers(root: Path, user_path: Path) -> tuple[list[Layer], list[Path]]:
    """The repo's pyproject section, then .tui-engineer.toml (later wins), and files read."""
    layers: list[Layer] = []
    read: list[Path] = []
    pyproject = root / "pyproject.toml"
    data = read_toml(pyproject)
    section = _tool_section(data) if data is not None else None
    if section is not None:
        origin = f"{pyproject} [tool.{PYPROJECT_TABLE}]"
        if not isinstance(section, dict):
            raise ConfigError(f"{origin}: must be a table of settings, got a plain value")
        layers.append(table_layer(section, origin, user_path=user_path))
        read.append(pyproject)
    own = root / REPO_FILE
    data = read_toml(own)
    if data is not None:
        layers.append(table_layer(data, str(own), user_path=user_path))
        read.append(own)
    return layers, read


def _tool_section(data: Mapping[str, object]) -> object | None:
    tool = data.get("tool")
    if not isinstance(tool, dict):
        return None
    return tool.get(PYPROJECT_TABLE, tool.get("tui_engineer"))


def user_layer(path: Path) -> tuple[Layer, list[Path]]:
    data = read_toml(path)
    if data is None:
        return {}, []
    layer = table_layer(data, str(path), user_path=None)
    # Sources say "user config …" so `tui-engineer config` makes the layer obvious.
    return {k: (v, f"user config {path}") for k, (v, _) in layer.items()}, [path]


def env_var(key: str) -> str:
    return ENV_PREFIX + key.upper()


def env_layer(env: Mapping[str, str]) -> Layer:
    """OPENAI_BASE_URL, then TUI_ENGINEER_<KEY> variables (which win)."""
    layer: Layer = {}
    base = env.get("OPENAI_BASE_URL", "").strip()
    if base:
        origin = "environment variable OPENAI_BASE_URL"
        layer["base_url"] = (coerce_value(FIELDS["base_url"], base, origin), "env OPENAI_BASE_URL")
    known = {env_var(k): k for k in FIELDS if k != "api_key"}
    for name, text in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        if name not in known:
            raise _unknown_env(name, known)
        key = known[name]
        value = parse_text(FIELDS[key], text, f"environment variable {name}")
        if value is not UNSET:
            layer[key] = (value, f"env {name}")
    return layer


def _unknown_env(name: str, known: Mapping[str, str]) -> ConfigError:
    if name == env_var("api_key"):
        return ConfigError(
            f"environment variable {name} is not read: put the key in OPENAI_API_KEY, or name "
            f"the variable that holds it with {env_var('api_key_env')}"
        )
    return unknown(name, "environment", known, noun="variable")


def flag_layer(flags: Mapping[str, object]) -> Layer:
    """Flags arrive typed (keys are Settings field names); ranges are still checked."""
    layer: Layer = {}
    for key, value in flags.items():
        if value is None:
            continue  # argparse's "not given"
        if key not in FIELDS:
            raise unknown(key, "command-line flags", FIELDS)
        origin = f"flag {flag_name(key)}"
        layer[key] = (coerce_value(FIELDS[key], value, origin, none_words=False), origin)
    return layer
