"""A snapshot of the Shell pane typing into a running program: the emulated terminal (a
colour, a REPL's prompt, the cursor), the border saying so, the footer offering only the way
out. Update with `pytest tests/tui/test_shell_snapshots.py --snapshot-update` and look at
the SVG."""

from __future__ import annotations

import pytest

from tests.tui.app_support import KEY, make_app, send_chat, type_text, wait_for


@pytest.fixture
def api_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_typing_into_a_python_repl_in_the_full_shell_pane(
    snap_compare, api_env, make_repo, scripted_server
):
    app = make_app(make_repo(), scripted_server.base_url)

    async def typed(pilot) -> None:
        await wait_for(pilot, lambda: app.controller.ready)
        await send_chat(pilot, r"!printf '\033[1;32mready\033[0m\n'; python3 -q")
        await wait_for(pilot, lambda: ">>>" in app.shell_pane.output_lines, timeout=20)
        await pilot.press("f", "i")
        await type_text(pilot, "print(6*7)")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "42" in app.shell_pane.output_lines, timeout=20)
        await wait_for(pilot, lambda: app.shell_pane.output_lines[-1] == ">>>", timeout=20)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=typed)
