"""What a front end remembers for the user between sessions, in the user config folder: the
theme chosen (a line of config.toml, the rest kept as written) and where the pane sizes are
kept (layout.json beside it). Here, in the core, so front ends never reach config/ directly."""

from __future__ import annotations

import re
from pathlib import Path

from tui_engineer.config.layers import user_config_path


def layout_path() -> Path:
    return user_config_path().with_name("layout.json")


_THEME_LINE = re.compile(r"^\s*theme\s*=.*$", re.MULTILINE)
_TABLE = re.compile(r"^\s*\[", re.MULTILINE)


def save_theme_choice(name: str, path: Path | None = None) -> None:
    """Set `theme = "name"` in the user config file, keeping everything else as written."""
    path = path or user_config_path()
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        line = f'theme = "{name}"'
        head_end = m.start() if (m := _TABLE.search(text)) else len(text)
        head, tail = text[:head_end], text[head_end:]
        if _THEME_LINE.search(head):
            head = _THEME_LINE.sub(line, head, count=1)
        else:
            head = line + "\n" + head
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + tail, encoding="utf-8")
    except OSError:
        pass  # a read-only config folder must not break the app; the theme still changes
