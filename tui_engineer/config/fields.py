"""What each setting accepts, and turning raw values (TOML, flags, env strings) into valid ones."""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any
from urllib.parse import urlparse

from tui_engineer.config.settings import ConfigError, Settings

# Strings that mean "no value" for optional settings (TOML has no null).
NONE_WORDS = frozenset({"", "none", "null"})
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})
SANDBOXES = ("local", "docker", "none")
APPROVALS = ("ask", "auto")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def _any(_: Any) -> bool:
    return True


def _inside_paths(value: str) -> bool:
    parts = value.replace(",", " ").split()
    return bool(parts) and all(
        not p.startswith(("/", "~")) and ".." not in p.split("/") and p.strip("/") not in ("", ".")
        for p in parts
    )


def _is_url(value: str) -> bool:
    parts = urlparse(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: type  # str, int, float or bool
    optional: bool
    expected: str  # completes "<key> must be …"
    check: Callable[[Any], bool] = _any


def _specs() -> dict[str, FieldSpec]:
    unlimited = ", or 'none' for unlimited"
    table = [
        ("model", str, "a non-empty model name such as 'gpt-4o-mini'", bool),
        (
            "base_url",
            str,
            "an http:// or https:// URL such as 'http://localhost:8000/v1', "
            "or 'none' for the SDK default",
            _is_url,
        ),
        (
            "api_key_env",
            str,
            "the name of an environment variable, such as 'OPENAI_API_KEY'",
            _ENV_NAME.fullmatch,
        ),
        ("api_key", str, "a non-empty string", bool),
        ("test_command", str, "a non-empty command such as 'python -m pytest -x'", bool),
        ("test_timeout", float, "a number of seconds > 0", lambda v: v > 0),
        ("max_fix_attempts", int, "a whole number ≥ 0", lambda v: v >= 0),
        ("sandbox", str, "one of 'local', 'docker', 'none'", lambda v: v in SANDBOXES),
        ("max_tokens", int, "a whole number > 0" + unlimited, lambda v: v > 0),
        ("max_usd", float, "a number of US dollars > 0" + unlimited, lambda v: v > 0),
        ("max_wall_seconds", float, "a number of seconds > 0" + unlimited, lambda v: v > 0),
        ("record_runs", bool, "true or false", _any),
        ("theme", str, "a non-empty theme name", bool),
        ("allow_network", bool, "true or false", _any),
        ("sandbox_template", str, "a template name such as 'python', or 'none' to pick", bool),
        ("full_tests_always", bool, "true or false", _any),
        ("pipeline", bool, "true or false", _any),
        ("test_first", bool, "true or false", _any),
        ("affected_after_seconds", float, "a number of seconds ≥ 0", lambda v: v >= 0),
        ("baseline", bool, "true or false", _any),
        *(
            (f"reply_tokens_{kind}", int, "a whole number of tokens > 0", lambda v: v > 0)
            for kind in ("plan", "propose", "diagnose", "fix")
        ),
        (
            "context_window",
            int,
            "a whole number of tokens ≥ 1024, or 'none' to ask the server",
            lambda v: v >= 1024,
        ),
        (
            "context_budget",
            int,
            "a whole number of tokens ≥ 256, or 'none' for the default",
            lambda v: v >= 256,
        ),
        ("show_rounds", int, "a whole number ≥ 0 (0: the model cannot ask)", lambda v: v >= 0),
        ("show_lines", int, "a whole number of lines ≥ 10", lambda v: v >= 10),
        ("stream_idle_timeout", float, "a number of seconds > 0", lambda v: v > 0),
        ("server_wait", float, "a number of seconds ≥ 0", lambda v: v >= 0),
        (
            "test_env",
            str,
            "variable names or PREFIX* patterns, separated by spaces or commas",
            lambda v: all(_ENV_PATTERN.fullmatch(p) for p in v.replace(",", " ").split()),
        ),
        (
            "show_ignored",
            str,
            "paths inside the repository such as 'generated/ vendor/', separated by spaces or "
            "commas (no absolute paths, no '..')",
            _inside_paths,
        ),
        (
            "approval",
            str,
            "'ask' (review every step) or 'auto' (a step whose tests pass is accepted)",
            lambda v: v in APPROVALS,
        ),
        (
            "read_only",
            str,
            "file paths inside the repository, separated by spaces or commas (no absolute "
            "paths, no '..')",
            _inside_paths,
        ),
    ]
    defaults = {f.name: f.default for f in fields(Settings)}
    assert [row[0] for row in table] == list(defaults), "keep FIELDS in step with Settings"
    return {
        name: FieldSpec(name, kind, defaults[name] is None, expected, check)
        for name, kind, expected, check in table
    }


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
