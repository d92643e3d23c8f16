"""Pane sizes on wide terminals: how wide the Files and Chat columns are, whether Files shows,
remembered between sessions in the user config folder (`layout.json`, beside config.toml).

The diff gets what is left: at 120x40 the Files column is hidden (it shows from
FILES_AUTO_COLUMNS on, or when toggled with `b`) so the diff has two thirds of the width."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

FILES_AUTO_COLUMNS = 150  # from this width on, Files shows unless the user hid it
MIN_SIDE, MAX_SIDE = 16, 80  # a side column can be resized within these widths
STEP = 4  # columns per resize key press
TESTS_ROWS = 12
PLAN_MAX_ROWS = 10  # the plan pane grows with its steps up to this (borders included)


@dataclass
class PaneSizes:
    files_width: int = 26
    chat_width: int = 40
    files_shown: bool | None = None  # None: by terminal width (FILES_AUTO_COLUMNS)

    def shows_files(self, columns: int) -> bool:
        return columns >= FILES_AUTO_COLUMNS if self.files_shown is None else self.files_shown

    def grid_columns(self, columns: int) -> str:
        chat = f"{self.chat_width}"
        return f"{self.files_width} 1fr {chat}" if self.shows_files(columns) else f"1fr {chat}"

    def resized(self, side: str, delta: int) -> PaneSizes:
        """These sizes with `side` ("files" or "chat") `delta` columns wider, within bounds."""
        name = f"{side}_width"
        width = min(MAX_SIDE, max(MIN_SIDE, getattr(self, name) + delta))
        return PaneSizes(**{**asdict(self), name: width})


def plan_rows(steps: int) -> int:
    """The plan pane's height: one row per step plus its border, 3 rows when there is none."""
    return min(PLAN_MAX_ROWS, max(1, steps) + 2)


def load_sizes(path: Path | None = None) -> PaneSizes:
    """The remembered sizes; the defaults when none are saved or the file is unreadable."""
    try:
        data = json.loads((path or layout_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return PaneSizes()
    known = {f.name for f in fields(PaneSizes)}
    try:
        sizes = PaneSizes(**{k: v for k, v in data.items() if k in known})
        return sizes.resized("files", 0).resized("chat", 0)  # clamp hand-edited numbers
    except (TypeError, AttributeError):
        return PaneSizes()


def save_sizes(sizes: PaneSizes, path: Path | None = None) -> None:
    path = path or layout_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(asdict(sizes), indent=1) + "\n", encoding="utf-8")
    except OSError:
        pass  # a read-only config folder must not break the app; the sizes still apply


def layout_path() -> Path:
    from tui_engineer.session.preferences import layout_path

    return layout_path()
