"""A headless run holds Python's cyclic garbage collector off while its start-up imports run
(base/start_collection.py: 0.16 s of a warm one-step session's CPU at 40,000 files went to
collections walking the imports' objects), and has it back on by its first model call, the
start's objects set aside for good; a run that ends before its model is made has it back on
too. In-process through the CLI's own entry, the openai client over HTTP to the scripted
server, a real repository and pytest run."""

from __future__ import annotations

import gc

import pytest

from tests.engine_support import SUB
from tests.scripted_server import Reply, ScriptedServer
from tui_engineer.base import start_collection
from tui_engineer.cli.main import main

pytestmark = pytest.mark.usefixtures("api_key")


def test_a_run_collects_again_by_its_first_model_call(
    make_repo, scripted_server: ScriptedServer, monkeypatch
) -> None:
    repo = make_repo()
    held_until_released: list[bool] = []
    release = start_collection.release

    def released() -> None:
        held_until_released.append(not gc.isenabled())
        release()

    monkeypatch.setattr(start_collection, "release", released)
    at_first_call: list[tuple[bool, int]] = []

    def first(_request: object) -> Reply:
        at_first_call.append((gc.isenabled(), gc.get_freeze_count()))
        return Reply(text=SUB)

    scripted_server.script(first)
    url = scripted_server.base_url
    code = main(["run", "add sub", "--yes", "--no-plan", "--no-record", "-C", str(repo),
                 "--base-url", url, "--model", "test-model"])  # fmt: skip
    assert code == 0
    assert held_until_released[0] is True  # off through the start, until the model was made
    enabled, frozen = at_first_call[0]
    assert enabled and frozen > 10_000  # the SDK's and this package's objects, set aside
    assert gc.isenabled()


def test_a_run_refused_at_its_start_collects_again(make_repo, scripted_server) -> None:
    repo = make_repo({"README.md": "no tests here\n"})  # refused: no test command
    url = scripted_server.base_url
    assert main(["run", "add sub", "--yes", "-C", str(repo), "--base-url", url]) != 0
    assert gc.isenabled()
