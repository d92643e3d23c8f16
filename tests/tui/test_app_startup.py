"""Start-up states each get a screen (never a traceback), and quitting mid-run leaves no trace."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FILES, git, write_files
from tests.sandbox_support import APPARMOR, path_without, stand_in_bwrap
from tests.scripted_server import unused_base_url
from tests.tiers import whole_session
from tests.tui.app_support import (
    KEY,
    SIZE,
    add_sub_app,
    make_app,
    reviewing,
    wait_for,
    wait_for_screen,
)
from tui_engineer.base import start_collection
from tui_engineer.sandbox.bwrap_program import forget_bwrap
from tui_engineer.tui.screens import (
    DirtyTreeScreen,
    InitRepoScreen,
    ProblemScreen,
    QuitScreen,
)
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home


async def test_no_api_key_shows_what_to_set_and_the_url_tried(make_repo, scripted_server) -> None:
    repo = make_repo()
    app = make_app(repo, scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        body = str(app.screen.query_one("#dialog-body").render())
        assert app.screen.title_text == "No API key"
        assert "OPENAI_API_KEY" in body
        assert f"URL tried: {scripted_server.base_url}" in body
        await pilot.click("#quit")
    assert app.return_code == 2
    assert scripted_server.chat_requests == []


async def test_q_on_a_start_up_problem_quits_as_everywhere_else(make_repo, scripted_server) -> None:
    # A newcomer's `tui-engineer --resume` in the demo's repo: "No API key", and q did nothing.
    repo = make_repo()
    app = make_app(repo, scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=10)
    assert app.return_code == 2


@whole_session
async def test_a_host_refusing_namespaces_gets_the_sandbox_screen(
    make_repo, scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap cannot create its namespaces (a stand-in failing as under Ubuntu's AppArmor rule):
    the start-up screen names the cause and the ways out, before any model call."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "bin"
    monkeypatch.setenv("PATH", path_without(folder, "bwrap"))
    stand_in_bwrap(folder, APPARMOR)
    forget_bwrap()
    try:
        app = make_app(make_repo(), scripted_server.base_url, "add sub")
        async with app.run_test(size=SIZE) as pilot:
            await wait_for_screen(pilot, app, ProblemScreen)
            body = str(app.screen.query_one("#dialog-body").render())
            assert app.screen.title_text == "No sandbox for the tests"
            assert APPARMOR in body and "--sandbox none" in body and "doctor" in body
            await pilot.click("#quit")
    finally:
        forget_bwrap()
    assert app.return_code == 2
    assert scripted_server.chat_requests == []


async def test_server_unreachable_says_so_with_the_url_tried(
    make_repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    url = unused_base_url()  # nothing listens there
    app = make_app(make_repo(), url, "add sub")
    app.check_retries = 0  # one refused connection is enough
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, ProblemScreen)
        body = str(app.screen.query_one("#dialog-body").render())
        assert app.screen.title_text == "Model server unreachable"
        assert f"URL tried: {url}" in body
        assert not app.controller.ready
        await pilot.click("#quit")
    assert app.return_code == 2


@whole_session
async def test_not_a_repo_offers_git_init_then_handles_the_files_already_there(
    tmp_path: Path, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    folder = tmp_path / "project"
    write_files(folder, SAMPLE_FILES)
    app = make_app(folder, scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, InitRepoScreen)
        assert not (folder / ".git").exists()
        await pilot.click("#init")
        # A new repository with files in it: they are uncommitted changes to deal with first.
        await wait_for_screen(pilot, app, DirtyTreeScreen)
        assert "calc.py" in str(app.screen.query_one("#dialog-body").render())
        await pilot.click("#wip")
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.press("q")
    assert (folder / ".git").is_dir()
    assert git(folder, "status", "--porcelain") == ""
    assert len(git(folder, "log", "--format=%s").splitlines()) == 1


async def test_dirty_tree_can_be_stashed_and_the_session_starts(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = make_repo()
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a  # mine\n")
    app = make_app(repo, scripted_server.base_url)
    start_collection.hold()  # as `tui-engineer` does before the app opens (cli/launch.py)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, app, DirtyTreeScreen)
        assert gc.isenabled()  # the human reads for as long as they like: collector back on
        await pilot.click("#stash")
        await wait_for(pilot, lambda: app.controller.ready)
        await pilot.press("q")
    assert git(repo, "status", "--porcelain") == ""
    assert len(git(repo, "stash", "list").splitlines()) == 1  # kept, not discarded


def shadows(repo: Path, *, beside: bool = False) -> list[Path]:
    """The shadow repositories of `repo` on disk (one per running session); `beside`: with
    what each keeps beside it (its owner lock, its test reports)."""
    with open_repo(repo) as opened:
        home = shadow_home(opened)
    found = sorted(home.iterdir()) if home.is_dir() else []
    return found if beside else [p for p in found if p.suffix not in (".owner", ".reports")]


@whole_session
async def test_quit_while_tests_run_leaves_the_repo_clean(
    make_repo, scripted_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    slow = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
    repo = make_repo({**SAMPLE_FILES, "tests/test_slow.py": slow})
    app = add_sub_app(repo, scripted_server)
    async with app.run_test(size=SIZE) as pilot:
        # The suite on the starting commit runs first (its test sleeps 60 s): said as such.
        await wait_for(pilot, lambda: app.status.busy == "tests running: the starting commit")
        assert len(shadows(repo)) == 1  # the shadow exists
        await pilot.press("ctrl+c")  # works even with the chat box focused
        await wait_for_screen(pilot, app, QuitScreen)
        await pilot.click("#quit")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=30)
    assert not reviewing(app)()
    assert shadows(repo, beside=True) == []
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "log", "--format=%s") == "initial"


def test_theme_choice_is_saved_in_the_user_config_keeping_other_settings(tmp_path: Path) -> None:
    from tui_engineer.session.preferences import save_theme_choice

    config = tmp_path / "config.toml"
    config.write_text('model = "gpt-4o-mini"\n\n[pricing]\nx = 1\n')
    save_theme_choice("tui-engineer-light", config)
    save_theme_choice("tui-engineer-dusk", config)
    text = config.read_text()
    assert text.count("theme =") == 1 and 'theme = "tui-engineer-dusk"' in text
    assert 'model = "gpt-4o-mini"' in text and text.index("theme") < text.index("[pricing]")


async def test_an_interrupted_accept_is_finished_at_start_and_said_in_the_chat(
    make_repo, scripted_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import write_hook
    from tests.tui.app_support import chat_text
    from tests.vcs.test_vcs_accept_atomic import MINUS, kill_when

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo = make_repo()
    marker = tmp_path / "ref-moved"
    ref_hook = f'[ "$1" = committed ] && grep -q refs/heads/main && touch {marker} && sleep 30\n'
    write_hook(repo, "reference-transaction", ref_hook + "exit 0\n")
    kill_when(repo, marker)  # killed after the branch moved, before any file was written
    (repo / ".git" / "hooks" / "reference-transaction").unlink()
    app = make_app(repo, scripted_server.base_url)
    async with app.run_test(size=SIZE) as pilot:  # no dirty-tree question: it is finished
        await wait_for(pilot, lambda: app.controller.ready)
        await wait_for(pilot, lambda: "its files are now written too" in chat_text(app))
        await pilot.press("q")
    assert (repo / "calc.py").read_text() == MINUS
    assert git(repo, "status", "--porcelain") == ""


@whole_session
async def test_a_wait_on_a_session_that_stopped_at_start_fails_at_once_with_its_reason(
    make_repo, scripted_server
) -> None:
    """The suite's own waits: a session that cannot start (here: no API key) fails a test in
    seconds, saying why, instead of after the 60 s timeout with 'timed out waiting for …'."""
    app = make_app(make_repo(), scripted_server.base_url, "add sub")
    async with app.run_test(size=SIZE) as pilot:
        started = time.monotonic()
        with pytest.raises(AssertionError) as failed:
            await wait_for(pilot, reviewing(app, 1))
        assert time.monotonic() - started < 20
        assert "the session stopped" in str(failed.value) and "No API key" in str(failed.value)
        await pilot.click("#quit")
