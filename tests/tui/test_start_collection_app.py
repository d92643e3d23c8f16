"""The TUI holds Python's cyclic garbage collector off from the app's opening (cli/launch.py)
until its start-up checks are done (base/start_collection.py: the first frame came 0.1 s
sooner), then collects the start's garbage once and sets the rest aside (a problem screen has
it back on: tests/tui/test_app_startup.py's dirty tree). The real app driven by Pilot, the
openai client over HTTP to the scripted server, a real repository."""

from __future__ import annotations

import gc

import pytest

from tests.tui.app_support import KEY, SIZE, add_sub_app, wait_for
from tui_engineer.base import start_collection


async def test_the_app_collects_again_once_its_start_up_checks_are_done(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    held_until_released: list[bool] = []
    release = start_collection.release

    def released(collect: bool = False) -> None:
        held_until_released.append(not gc.isenabled())
        release(collect)

    monkeypatch.setattr(start_collection, "release", released)
    app = add_sub_app(make_repo(), scripted_server)
    start_collection.hold()  # as `tui-engineer` does before the app opens (cli/launch.py)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready)
        assert held_until_released[:1] == [True]  # off through the checks, until then
        assert gc.isenabled()
        assert gc.get_freeze_count() > 10_000  # Textual's, the SDK's and this package's objects
        await pilot.press("q")
