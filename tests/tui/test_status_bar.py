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


class LiveBar(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusBar(deterministic=False, id="status")


async def test_a_long_wait_for_the_model_says_for_how_long() -> None:
    """Issue 37, part 3: a call that waits 10–30 s for its first token shows its own seconds,
    counted through the reply's streaming, and starts again with the next piece of work."""
    app = LiveBar()
    async with app.run_test(size=(120, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.phase = "step 2: Add mul"
        bar.busy = "model: propose"
        await pilot.pause()
        assert "model: propose  step 2" in line(app)  # no count in the first seconds
        bar.busy_since -= 14.2  # as if the call had started 14 s ago
        await pilot.pause(0.15)  # the bar redraws ten times a second
        assert "model: propose · 14 s  step 2: Add mul" in line(app)
        bar.busy = ""
        bar.busy = "tests running"
        await pilot.pause(0.15)
        assert "tests running  step 2" in line(app)


async def test_a_model_call_says_what_it_waits_for_then_that_the_reply_streams() -> None:
    """Issue 37, part 3: "step 2 · waiting for the model: propose · 14 s", counted from the
    call's start even when other work (the suite on the starting commit) ran before it."""
    app = LiveBar()
    async with app.run_test(size=(140, 3)) as pilot:
        bar = app.query_one(StatusBar)
        bar.phase = "step 2: Add mul"
        bar.busy = "tests running: the starting commit"
        bar.busy_since -= 30  # the suite has run for 30 s
        bar.busy = "model: propose"
        bar.call_started("step 2 · waiting for the model: propose")
        bar.busy_since -= 14.2
        await pilot.pause(0.15)
        assert "step 2 · waiting for the model: propose · 14 s  step 2: Add mul" in line(app)
        bar.busy = ""
        await pilot.pause(0.15)
        assert "waiting" not in line(app)
