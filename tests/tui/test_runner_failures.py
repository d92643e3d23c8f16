"""The TUI with a Rust crate: the real app, engine, scripted model over HTTP and cargo test under
bubblewrap. The failing test is listed by cargo's name, and picking it shows its panic."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList

from tests.engine.test_engine_runners import (
    MUL_BUGGY_RS,
    MUL_FIX_RS,
    RUST_FILES,
    cargo_on_path,
    needs_cargo,
)
from tests.scripted_server import Reply, ScriptedServer
from tests.tiers import whole_session
from tests.tui.app_support import SIZE, make_app, wait_for

__all__ = ["cargo_on_path"]  # its autouse fixture puts cargo on PATH here too


pytestmark = pytest.mark.usefixtures("api_key")


@whole_session
@needs_cargo
async def test_a_failing_cargo_test_is_listed_and_opens_its_panic(
    make_repo, scripted_server: ScriptedServer
) -> None:
    repo = make_repo(RUST_FILES)
    scripted_server.script(
        Reply(text=MUL_BUGGY_RS),
        Reply(text="mul adds instead of multiplying."),
        Reply(text=MUL_FIX_RS, delay=30),  # the fix call hangs while we look
    )
    app = make_app(repo, scripted_server.base_url, "add mul", plan=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.test_pane.failures != [])
        assert app.test_pane.failures == ["tests::multiplies"]
        assert "1 passed · 1 failed" in app.test_pane.header_text
        failures = app.test_pane.query_one("#test-failures", OptionList)
        failures.focus()
        await pilot.press("enter")
        await pilot.pause()
        shown = "\n".join(app.test_pane.lines)
        assert "tests::multiplies" in shown and "panicked at src/lib.rs" in shown
        await app.action_quit()
