"""One model-name check for both front ends: a name the headless command runs with is never
refused by the TUI, and a name neither can use is refused by both with the same message.

llama.cpp's server lists its one model as the .gguf path it loaded and answers to any name."""

from __future__ import annotations

import pytest

from tests.engine_support import SUB, run_headless
from tests.scripted_server import Reply
from tests.scripted_server import scripted_server as scripted_server  # noqa: F401 (fixture)
from tests.tiers import whole_session
from tests.tui.app_support import KEY, SIZE, make_app, wait_for, wait_for_screen
from tui_engineer.llm import UnknownModel
from tui_engineer.llm.models import model_is_served
from tui_engineer.tui.screens import ProblemScreen

GGUF = "/root/.cache/models/gemma3-270m-it-q4_k_m.gguf"


@pytest.mark.parametrize(
    ("wanted", "listed", "served"),
    [
        ("gpt-4o-mini", ["gpt-4o-mini", "o3"], True),
        ("gpt-4o-mini", ["llama3", "qwen2.5-coder"], False),
        ("anything", [], True),  # a server that lists nothing cannot be checked
        ("test-model", [GGUF], True),  # llama.cpp: one model file, any name works
        ("gemma3-270m-it-q4_k_m", [GGUF, "other"], True),  # the file's name
        ("gemma3-270m-it-q4_k_m.gguf", [GGUF, "other"], True),
        ("Qwen/Qwen2.5-Coder-7B", ["Qwen/Qwen2.5-Coder-7B"], True),
        ("test-model", ["Qwen/Qwen2.5-Coder-7B"], False),  # vLLM checks names: so do we
    ],
)
def test_which_names_a_server_serves(wanted: str, listed: list[str], served: bool) -> None:
    assert model_is_served(wanted, listed) is served


async def test_tui_accepts_the_model_a_llama_server_lists_as_its_gguf_path(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scripted_server.models = [GGUF]
    app = make_app(make_repo(), scripted_server.base_url)  # model "test-model"
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.controller.ready or isinstance(app.screen, ProblemScreen))
        assert not isinstance(app.screen, ProblemScreen), app.screen
        await pilot.press("q")


@whole_session
async def test_headless_runs_with_the_model_a_llama_server_lists_as_its_gguf_path(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scripted_server.models = [GGUF]
    scripted_server.script(Reply(text=SUB))
    result, _ = await run_headless(make_repo(), "add sub", scripted_server.base_url, plan=False)
    assert result.outcome == "done" and len(result.commits) == 1


async def test_both_front_ends_refuse_a_name_the_server_does_not_list(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    scripted_server.models = ["llama3", "qwen2.5-coder"]
    repo = make_repo()
    with pytest.raises(UnknownModel, match="llama3, qwen2.5-coder") as headless:
        await run_headless(repo, "add sub", scripted_server.base_url, plan=False)
    assert scripted_server.chat_requests == []  # refused before any call is paid for
    app = make_app(repo, scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        assert app.screen.title_text == "Unknown model"
        body = str(app.screen.query_one("#dialog-body").render())
        assert "'test-model'" in body and "'test-model'" in str(headless.value)
        await pilot.click("#quit")
