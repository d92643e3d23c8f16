"""The command palette (ctrl+p): its entries do what they say."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.app_support import SIZE, make_app, type_text, wait_for

pytestmark = pytest.mark.usefixtures("api_key")


def messages(app) -> list[str]:
    return [str(note.message) for note in app._notifications]


async def test_the_palettes_screenshot_saves_an_svg_where_the_app_says(
    make_repo, scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    downloads = tmp_path / "downloads"
    monkeypatch.setenv("XDG_DOWNLOAD_DIR", str(downloads))
    app = make_app(make_repo(), scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.press("ctrl+p")
        await type_text(pilot, "screenshot")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("creenshot" in m for m in messages(app)))
        said = " ".join(messages(app))
        saved = list(tmp_path.rglob("*.svg"))
        assert len(saved) == 1, said
        assert str(saved[0]) in said
        assert "<svg" in saved[0].read_text()
