"""What each setting accepts, and turning raw values (TOML, flags, env strings) into valid ones."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from tui_engineer.config.checks import anything
from tui_engineer.config.settings import ConfigError, Flag, Settings, Yours

# Strings that mean "no value" for optional settings (TOML has no null).
NONE_WORDS = frozenset({"", "none", "null"})
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})
_KINDS = {"str": str, "int": int, "float": float, "bool": bool}


@dataclass(frozen=True)
class FieldSpec:
    """One setting as its declaration in `Settings` says (config/settings.py)."""

    name: str
    kind: type  # str, int, float or bool
    optional: bool
    expected: str  # completes "<key> must be …"
    check: Callable[[Any], bool] = anything
    flag: Flag | None = None
    yours: Yours | None = None  # set only by you, never by a repository's config
    unit: str = ""
    when_none: str = ""


def _specs() -> dict[str, FieldSpec]:
    specs = {}
    for f in fields(Settings):
        # The annotation as written (`from __future__ import annotations`): "int | None".
        names = [part.strip() for part in str(f.type).split("|")]
        kind = _KINDS[names[0]]
        specs[f.name] = FieldSpec(f.name, kind, "None" in names, **f.metadata)
    return specs


FIELDS: dict[str, FieldSpec] = _specs()


def normalize_key(key: str) -> str:
    """TOML keys are snake_case; `max-fix-attempts` is accepted as a spelling of the same key."""
    return key.strip().replace("-", "_")


def show(value: object) -> str:
    """A value as the user wrote it, short enough for an error message."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, dict):
        text = "a table"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def invalid(spec: FieldSpec, value: object, origin: str) -> ConfigError:
    # A malformed secret is still a secret: name its type, never its text.
    got = _kind_of(value) if spec.name == "api_key" else show(value)
    return ConfigError(f"{origin}: {spec.name} must be {spec.expected}, got {got}")


def _kind_of(value: object) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a table"}
    return kinds.get(type(value), "an unusable value")


def unknown(key: str, origin: str, known: Iterable[str], *, noun: str = "key") -> ConfigError:
    """An unknown key, with the closest known one suggested (typos are the usual cause)."""
    known = list(known)
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    if close:
        hint = f" — did you mean '{close[0]}'?"
    else:
        hint = f". Known {noun}s: " + ", ".join(known)
    return ConfigError(f"{origin}: unknown {noun} '{key}'{hint}")


def _typed_ok(spec: FieldSpec, value: object) -> bool:
    if spec.kind is bool:
        return isinstance(value, bool)
    if spec.kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if spec.kind is float:
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and math.isfinite(value)  # type: ignore[arg-type]
    return isinstance(value, str)


def coerce_value(spec: FieldSpec, value: object, origin: str, *, none_words: bool = True) -> object:
    """Validate an already-typed value (from TOML or a flag); ints are accepted as floats.

    With `none_words`, "none" or "" means None for optional keys (TOML has no null). Flags
    turn it off: `--test-cmd ""` is a mistake to report, not a request to auto-detect.
    """
    if spec.optional and value is None:
        return None
    is_word = isinstance(value, str) and value.strip().lower() in NONE_WORDS
    if spec.optional and none_words and is_word:
        return None
    if not _typed_ok(spec, value):
        raise invalid(spec, value, origin)
    if isinstance(value, str):
        value = value.strip()
    elif spec.kind is float:
        value = float(value)  # type: ignore[arg-type]
    if not spec.check(value):
        raise invalid(spec, value, origin)
    return value


class _Unset:
    """Marker: an empty environment variable for a setting that cannot be 'none'."""


UNSET = _Unset()


def parse_text(spec: FieldSpec, text: str, origin: str) -> object:
    """Turn an environment variable's string into a valid value (or UNSET when empty)."""
    raw = text.strip()
    if raw.lower() in NONE_WORDS and spec.optional:
        return None
    if raw == "":
        return UNSET  # `export TUI_ENGINEER_MODEL=` means "not set here", as most tools treat it
    parsed: object = raw
    try:
        if spec.kind is bool:
            parsed = _parse_bool(raw)
        elif spec.kind is int:
            parsed = int(raw)
        elif spec.kind is float:
            parsed = float(raw)
    except ValueError:
        raise invalid(spec, text, origin) from None
    try:
        return coerce_value(spec, parsed, origin)
    except ConfigError:
        raise invalid(spec, text, origin) from None


def _parse_bool(raw: str) -> bool:
    word = raw.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ValueError(raw)
