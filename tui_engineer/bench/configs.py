"""Bench configs are data: named sets of engine switches, from the shipped configs.toml or a
file of the user's. `plan` and `diagnose` are session options; every other key is a setting
(`max_fix_attempts`, a context budget, test-first steps… whatever Settings has), validated by
the same rules as .tui-engineer.toml when the file is read, so a new engine knob needs no
code here."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.config.fields import FIELDS, coerce_value
from tui_engineer.config.settings import Settings

SHIPPED = Path(__file__).parent / "configs.toml"
_SESSION_KEYS = {"plan", "diagnose", "description"}
# Model, server and sandbox come from the bench's own flags, the same for every config.
_NOT_PER_CONFIG = {"model", "base_url", "api_key", "api_key_env", "sandbox", "record_runs"}


@dataclass(frozen=True)
class Config:
    name: str
    plan: bool = True
    diagnose: bool = True
    settings: dict[str, object] = field(default_factory=dict)
    description: str = ""


def _parse(name: str, table: object, origin: str) -> Config:
    if not isinstance(table, dict):
        raise UserError(f"{origin}: [{name}] must be a table of switches")
    known = {f.name for f in fields(Settings)} - _NOT_PER_CONFIG
    unknown = set(table) - known - _SESSION_KEYS
    if unknown:
        raise UserError(
            f"{origin}: config '{name}' has unknown keys {sorted(unknown)}; "
            f"known: {sorted(known | _SESSION_KEYS)}"
        )
    for key in ("plan", "diagnose"):
        if not isinstance(table.get(key, True), bool):
            raise UserError(f"{origin}: config '{name}': {key} must be true or false")
    # Checked here, where the file, the config and the key can be named: each run passes them
    # to the engine as flags, whose messages would say "flag --context-budget".
    where = f"{origin}: config '{name}'"
    settings = {
        key: coerce_value(FIELDS[key], value, where)  # 'none' is the default, as in any file
        for key, value in table.items()
        if key not in _SESSION_KEYS
    }
    return Config(
        name=name,
        plan=table.get("plan", True),
        diagnose=table.get("diagnose", True),
        settings=settings,
        description=str(table.get("description", "")),
    )


def load_configs(path: Path | None = None) -> dict[str, Config]:
    path = path or SHIPPED
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise UserError(f"{path}: cannot read bench configs: {err}") from None
    return {name: _parse(name, table, str(path)) for name, table in data.items()}


def pick(configs: dict[str, Config], names: list[str] | None) -> list[Config]:
    if not names:
        return [configs["default"]] if "default" in configs else list(configs.values())[:1]
    missing = [n for n in names if n not in configs]
    if missing:
        raise UserError(
            f"Unknown config {', '.join(missing)}; known: {', '.join(configs)} "
            "(or pass --configs FILE)"
        )
    return [configs[n] for n in names]
