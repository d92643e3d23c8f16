"""Each setting is declared once (config/settings.py): its flag, its variable, whether a
repository may set it, and its documentation all follow from that one declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_engineer.cli.arguments import build_run_parser, flag_overrides
from tui_engineer.config import ConfigError, load_settings
from tui_engineer.config.fields import FIELDS, FieldSpec
from tui_engineer.config.layers import env_layer, table_layer

DOCS = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"
# A valid value of each kind, as a user would type it (a string setting's own check may want
# more: those are given here).
TYPED = {bool: "true", int: "2048", float: "2.5", str: "python -m pytest"}
WORDS = {
    "base_url": "http://localhost:8000/v1",
    "api_key_env": "MY_KEY",
    "sandbox": "docker",
    "approval": "auto",
    "test_env": "CI_*",
    "show_ignored": "generated/",
    "read_only": "tests/test_x.py",
}


def _typed(spec: FieldSpec) -> object:
    text = WORDS.get(spec.name, TYPED[spec.kind])
    return {bool: lambda t: t == "true", int: int, float: float, str: str}[spec.kind](text)


@pytest.mark.parametrize("spec", [s for s in FIELDS.values() if s.flag], ids=lambda s: s.name)
def test_each_flag_sets_its_setting(spec: FieldSpec, tmp_path: Path) -> None:
    assert spec.flag is not None
    argv = (
        [spec.flag.name]
        if spec.flag.const is not None
        else [spec.flag.name, WORDS.get(spec.name, TYPED[spec.kind])]
    )
    flags = flag_overrides(build_run_parser().parse_args(["do it", *argv]))
    loaded = load_settings(None, flags)
    expected = spec.flag.const if spec.flag.const is not None else _typed(spec)
    if spec.flag.scale != 1.0:  # --max-minutes 2.5 is 150 seconds
        expected = expected * spec.flag.scale  # type: ignore[operator]
    assert getattr(loaded.settings, spec.name) == expected
    assert loaded.sources[spec.name] == f"flag {spec.flag.name}"


@pytest.mark.parametrize(
    "spec", [s for s in FIELDS.values() if s.name != "api_key"], ids=lambda s: s.name
)
def test_each_setting_has_its_variable(spec: FieldSpec) -> None:
    name = "TUI_ENGINEER_" + spec.name.upper()
    layer = env_layer({name: WORDS.get(spec.name, TYPED[spec.kind])})
    assert layer[spec.name] == (_typed(spec), f"env {name}")


@pytest.mark.parametrize("spec", list(FIELDS.values()), ids=lambda s: s.name)
def test_a_repository_sets_only_what_is_not_yours_alone(spec: FieldSpec) -> None:
    yours = spec.yours
    value = yours.values[0] if yours and yours.values else _typed(spec)
    user = Path("/home/me/.config/tui-engineer/config.toml")
    if yours is None:
        assert table_layer({spec.name: value}, "repo/.tui-engineer.toml", user_path=user)
        return
    with pytest.raises(ConfigError) as caught:
        table_layer({spec.name: value}, "repo/.tui-engineer.toml", user_path=user)
    message = str(caught.value)
    assert message.startswith(f"repo/.tui-engineer.toml: {spec.name}")
    assert "must not be set in a repository's config file" in message
    assert str(user) in message  # where to set it instead
    # The user's own config may set it.
    assert table_layer({spec.name: value}, str(user), user_path=None)


def test_the_configuration_page_has_a_row_for_every_setting_with_its_flag() -> None:
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 5:
            rows[cells[0].strip("`")] = cells
    assert sorted(rows) == sorted(FIELDS)
    for name, spec in FIELDS.items():
        flag = rows[name][4]
        assert flag.startswith(f"`{spec.flag.name}`") if spec.flag else flag == "—", name
