"""Themes as data: bundled ones load and validate, user ones are found, broken ones skipped."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from tui_engineer.tui.themes import (
    DEFAULT_THEME,
    load_theme_files,
    load_themes,
    register_themes,
    user_themes_dir,
)

USER_THEME = """
name = "my-theme"
dark = false
[colors]
primary = "#336699"
background = "#fafafa"
"""


def test_bundled_themes_load_and_make_full_colour_systems() -> None:
    loaded = load_theme_files(Path("/nonexistent"))
    names = [theme.name for theme in loaded.themes]
    assert loaded.problems == []
    assert {DEFAULT_THEME, "tui-engineer-light"} <= set(names) and len(names) >= 3
    by_name = {theme.name: theme for theme in loaded.themes}
    assert by_name[DEFAULT_THEME].dark and not by_name["tui-engineer-light"].dark
    for theme in loaded.themes:
        variables = theme.to_color_system().generate()
        assert variables["primary"] and variables["background"]


def test_user_themes_come_from_the_user_config_folder() -> None:
    folder = user_themes_dir()
    assert "tui-engineer" in folder.parts  # under the (test-isolated) user config dir
    folder.mkdir(parents=True)
    (folder / "mine.toml").write_text(USER_THEME)
    mine = {theme.name: theme for theme in load_themes()}["my-theme"]
    assert mine.primary == "#336699" and mine.dark is False


def test_a_user_theme_replaces_a_bundled_one_of_the_same_name(tmp_path: Path) -> None:
    (tmp_path / "dark.toml").write_text(
        f'name = "{DEFAULT_THEME}"\n[colors]\nprimary = "#ff0000"\n'
    )
    themes = {theme.name: theme for theme in load_themes(tmp_path)}
    assert themes[DEFAULT_THEME].primary == "#ff0000"


def test_broken_user_themes_are_reported_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "bad_toml.toml").write_text("name = 'x\n")
    (tmp_path / "bad_colour.toml").write_text('name = "oops"\n[colors]\nprimary = "#zzz"\n')
    (tmp_path / "no_primary.toml").write_text('name = "plain"\n[colors]\nbackground = "#000"\n')
    (tmp_path / "typo.toml").write_text('name = "typo"\n[colours]\nprimary = "#000"\n')
    (tmp_path / "good.toml").write_text(USER_THEME)
    loaded = load_theme_files(tmp_path)
    assert "my-theme" in {theme.name for theme in loaded.themes}
    assert not {"oops", "plain", "typo"} & {theme.name for theme in loaded.themes}
    problems = "\n".join(loaded.problems)
    assert len(loaded.problems) == 4
    assert "bad_toml.toml: not valid TOML" in problems
    assert "colors.primary = '#zzz' is not a colour" in problems
    assert "needs at least 'primary'" in problems
    assert "unknown keys ['colours']" in problems


async def test_register_themes_makes_them_selectable_and_notifies_problems(
    tmp_path: Path,
) -> None:
    (tmp_path / "good.toml").write_text(USER_THEME)
    (tmp_path / "broken.toml").write_text("[[[")
    app: App[None] = App()
    async with app.run_test() as pilot:
        register_themes(app, tmp_path)
        app.theme = DEFAULT_THEME
        await pilot.pause()
        assert app.current_theme.name == DEFAULT_THEME
        app.theme = "my-theme"
        assert app.current_theme.primary == "#336699"
        notes = list(app._notifications)
        assert len(notes) == 1 and "broken.toml" in notes[0].message
        assert notes[0].severity == "warning"


def test_every_subpackage_and_the_themes_folder_are_packaged() -> None:
    """pyproject lists packages by hand (to map themes/ into the package); none may be missing."""
    import tomllib

    from setuptools import find_namespace_packages

    root = Path(__file__).resolve().parents[2]
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    # Bench suites are data (small projects' files, shipped as package data), not packages.
    data = ["tui_engineer.bench.suites", "tui_engineer.bench.suites.*"]
    found = set(find_namespace_packages(where=str(root), include=["tui_engineer*"], exclude=data))
    missing = sorted(found - set(setuptools["packages"]))
    assert not missing, f"add {missing} to [tool.setuptools] packages in pyproject.toml"
    assert setuptools["package-dir"]["tui_engineer.themes"] == "themes"
    assert setuptools["package-data"]["tui_engineer.themes"] == ["*.toml"]
