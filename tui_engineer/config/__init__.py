"""Configuration: flags > environment > the repo's file > the user's file > defaults.

See docs/configuration.md for every key. Modules: `settings` (the dataclasses and ConfigError),
`fields` (what each key accepts), `layers` (reading files, env and flags), `loader` (merging),
`detect` (test command detection) and `display` (`tui-engineer config` output).
"""

from tui_engineer.config.detect import detect_test_command
from tui_engineer.config.display import format_settings
from tui_engineer.config.layers import user_config_path
from tui_engineer.config.loader import load_settings
from tui_engineer.config.settings import ConfigError, LoadedSettings, Settings

__all__ = [
    "ConfigError",
    "LoadedSettings",
    "Settings",
    "detect_test_command",
    "format_settings",
    "load_settings",
    "user_config_path",
]
