"""Configuration: flags > environment > the repo's file > the user's file > defaults.

See docs/configuration.md for every key. Modules: `settings` (each setting declared once, and
ConfigError), `checks` (what a value must satisfy), `fields` (the declarations as specs, and
coercion), `layers` (reading files, env and flags), `loader` (merging), `detect` (test command
detection) and `display` (`tui-engineer config` output). The names below load on first use:
the command line's parsers read the declarations without the test-runner detection's imports.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "ConfigError": "settings",
    "LoadedSettings": "settings",
    "Settings": "settings",
    "detect_test_command": "detect",
    "format_settings": "display",
    "load_settings": "loader",
    "user_config_path": "layers",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
