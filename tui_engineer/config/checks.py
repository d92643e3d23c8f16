"""What a setting's value must satisfy beyond its type: the checks its declaration names
(config/settings.py), kept apart so the declarations read as a table."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

SANDBOXES = ("local", "docker", "none")
APPROVALS = ("ask", "auto")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\*?")


def anything(_: Any) -> bool:
    return True


def non_empty(value: Any) -> bool:
    return bool(value)


def positive(value: float) -> bool:
    return value > 0


def not_negative(value: float) -> bool:
    return value >= 0


def at_least(low: float) -> Any:
    return lambda value: value >= low


def one_of(*allowed: str) -> Any:
    return lambda value: value in allowed


def inside_paths(value: str) -> bool:
    """Relative paths inside the repository, separated by spaces or commas."""
    parts = value.replace(",", " ").split()
    return bool(parts) and all(
        not p.startswith(("/", "~")) and ".." not in p.split("/") and p.strip("/") not in ("", ".")
        for p in parts
    )


def is_url(value: str) -> bool:
    parts = urlparse(value)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def env_name(value: str) -> bool:
    return _ENV_NAME.fullmatch(value) is not None


def env_patterns(value: str) -> bool:
    return all(_ENV_PATTERN.fullmatch(p) for p in value.replace(",", " ").split())
