"""Themes as data: TOML files parsed into a validated spec, then into Textual themes.

Bundled themes live in the top-level `themes/` folder of the source tree, shipped inside the
package as `tui_engineer/themes/`; users add their own in `user_themes_dir()`. A broken user file
never stops the app: it is skipped and reported as a one-line message fit for `App.notify`.
"""

from __future__ import annotations

import logging
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
from textual.app import App
from textual.color import Color, ColorParseError
from textual.theme import Theme

log = logging.getLogger(__name__)

DEFAULT_THEME = "tui-engineer-dark"
COLOR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "warning",
    "error",
    "success",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
TOP_LEVEL_KEYS = {"name", "dark", "colors", "variables", "luminosity_spread", "text_alpha"}
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # tui_engineer/


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and what to fix."""


@dataclass(frozen=True)
class ThemeSpec:
    """What a theme file may hold, checked before Textual sees it."""

    name: str
    primary: str
    dark: bool = True
    colors: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    luminosity_spread: float = 0.15
    text_alpha: float = 0.95

    def to_theme(self) -> Theme:
        others = {key: value for key, value in self.colors.items() if key != "primary"}
        return Theme(
            name=self.name,
            primary=self.primary,
            dark=self.dark,
            luminosity_spread=self.luminosity_spread,
            text_alpha=self.text_alpha,
            variables=dict(self.variables),
            **others,
        )


@dataclass(frozen=True)
class ThemeLoad:
    """The themes that loaded, and one message per file that did not."""

    themes: list[Theme]
    problems: list[str]


def user_themes_dir() -> Path:
    """Where users drop their own `*.toml` themes (per-OS user config folder)."""
    return platformdirs.user_config_path("tui-engineer") / "themes"


def bundled_themes_dir() -> Path:
    """The shipped themes: inside the installed package, or `themes/` in a source checkout."""
    installed = _PACKAGE_DIR / "themes"
    if installed.is_dir() and any(installed.glob("*.toml")):
        return installed
    return _PACKAGE_DIR.parent / "themes"


def parse_theme(path: Path) -> ThemeSpec:
    """Read and validate one theme file; raises ThemeFileError with an actionable message."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ThemeFileError(f"Theme {path}: cannot read it ({err}).") from err
    except tomllib.TOMLDecodeError as err:
        raise ThemeFileError(f"Theme {path}: not valid TOML ({err}).") from err
    try:
        return _spec_from(data)
    except ValueError as err:
        raise ThemeFileError(f"Theme {path}: {err}") from err


def _spec_from(data: dict[str, Any]) -> ThemeSpec:
    unknown = set(data) - TOP_LEVEL_KEYS
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}; allowed: {sorted(TOP_LEVEL_KEYS)}.")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError("'name' must be lowercase letters, digits and dashes, e.g. 'my-theme'.")
    colors = _colors(data.get("colors", {}))
    if "primary" not in colors:
        raise ValueError("[colors] needs at least 'primary'.")
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ValueError("'dark' must be true or false.")
    return ThemeSpec(
        name=name,
        primary=colors["primary"],
        dark=dark,
        colors=colors,
        variables=_variables(data.get("variables", {})),
        luminosity_spread=_fraction(data, "luminosity_spread", 0.15),
        text_alpha=_fraction(data, "text_alpha", 0.95),
    )


def _colors(table: Any) -> dict[str, str]:
    if not isinstance(table, dict):
        raise ValueError('[colors] must be a table of name = "#rrggbb".')
    unknown = set(table) - set(COLOR_KEYS)
    if unknown:
        raise ValueError(f"unknown colors {sorted(unknown)}; allowed: {', '.join(COLOR_KEYS)}.")
    for key, value in table.items():
        _check_color(f"colors.{key}", value)
    return dict(table)


def _variables(table: Any) -> dict[str, str]:
    if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
        raise ValueError("[variables] must map Textual variable names to strings.")
    return dict(table)


def _check_color(where: str, value: Any) -> None:
    if not isinstance(value, str):
        raise ValueError(f'{where} must be a colour string like "#1e1e2e".')
    try:
        Color.parse(value)
    except ColorParseError as err:
        raise ValueError(f"{where} = {value!r} is not a colour ({err}).") from err


def _fraction(data: dict[str, Any], key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValueError(f"'{key}' must be a number between 0 and 1.")
    return float(value)


def load_theme_files(user_dir: Path | None = None) -> ThemeLoad:
    """Bundled themes, then user themes (a user theme may replace a bundled one by name)."""
    by_name: dict[str, Theme] = {}
    problems: list[str] = []
    for folder in (bundled_themes_dir(), user_themes_dir() if user_dir is None else user_dir):
        for path in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
            try:
                theme = parse_theme(path).to_theme()
            except ThemeFileError as err:
                problems.append(f"{err} Skipped.")
                continue
            by_name[theme.name] = theme
    return ThemeLoad(themes=list(by_name.values()), problems=problems)


def load_themes(user_dir: Path | None = None) -> list[Theme]:
    """All usable themes; broken files are logged and skipped (see `load_theme_files`)."""
    loaded = load_theme_files(user_dir)
    for problem in loaded.problems:
        log.warning(problem)
    return loaded.themes


def register_themes(app: App[Any], user_dir: Path | None = None) -> None:
    """Register every theme with `app`; each broken user file becomes a warning toast."""
    loaded = load_theme_files(user_dir)
    for theme in loaded.themes:
        app.register_theme(theme)
    for problem in loaded.problems:
        app.notify(problem, title="Theme skipped", severity="warning", timeout=10)


def dress(app: App[Any]) -> None:
    """The house's themes on another app (the bench's: bench/app.py), the default one chosen."""
    register_themes(app)
    app.theme = DEFAULT_THEME
