"""The status bar on a narrow terminal: what the session is doing may be shortened, the facts a
user checks at a glance (tokens and money against their budget) never are."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult

from tui_engineer.tui.panes.status import StatusBar


class OneBar(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar(deterministic=True, id="status")


def line(app: App[None]) -> str:
    bar = app.query_one(StatusBar)
    return "".join(segment.text for segment in bar.render_line(0)).rstrip()


@pytest.mark.parametrize("width", [80, 60])
async def test_a_long_phase_gives_way_to_tokens_and_cost(width: int) -> None:
    app = OneBar()
    async with app.run_test(size=(width, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.model, bar.sandbox = "qwen2.5-coder-32b-instruct", "local"
        bar.busy = "tests running (affected first)"
        bar.phase = "review step 2 of 3 (tests pass after 1 fix)"
        bar.tokens, bar.max_tokens, bar.usd, bar.max_usd = 12_345, 200_000, None, 5.0
        await pilot.pause()
        shown = line(app)
        assert len(shown) <= width
        assert shown.endswith("12,345 tok / 200,000 │ cost unknown / $5.00")
        assert "…" in shown  # what was cut says so
        assert shown.startswith("● tests run")  # what is under way comes first


async def test_everything_shows_when_it_fits() -> None:
    app = OneBar()
    async with app.run_test(size=(160, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.model, bar.sandbox, bar.phase = "test-model", "local", "review step 1"
        bar.tokens, bar.usd = 100, 0.0015
        await pilot.pause()
        assert line(app) == "review step 1 │ test-model │ sandbox: local │ 100 tok │ $0.0015"
