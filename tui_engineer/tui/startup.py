"""Start-up: the checks before a session can run, each problem shown as a screen
(`StartupFlow`, mixed into the app), and the plain helpers behind those screens — a title per
problem, the server URL a problem is about, and remembering the chosen theme."""

from __future__ import annotations

import asyncio
import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from textual import work

from tui_engineer.errors import UserError
from tui_engineer.llm.usage import price_for
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.screens import DirtyTreeScreen, InitRepoScreen, NoTestsScreen, ProblemScreen

if TYPE_CHECKING:
    from tui_engineer.session.prepare import Prepared

DEFAULT_URL = "https://api.openai.com/v1"


async def load_engine() -> ModuleType:
    """The session runner and the engine under it, imported in a thread: the app paints its
    first frame without them and stays responsive while they load (benchmarks/first_paint.py)."""
    return await asyncio.to_thread(importlib.import_module, "tui_engineer.session.run")


def problem_title(err: UserError) -> str:
    from tui_engineer.config import ConfigError
    from tui_engineer.llm.errors import (
        AuthRejected,
        MissingApiKey,
        ServerUnreachable,
        UnknownModel,
    )
    from tui_engineer.sandbox.bwrap_program import SandboxUnavailable
    from tui_engineer.vcs import GitRefused
    from tui_engineer.vcs.one_session import SessionElsewhere

    titles: list[tuple[type[UserError], str]] = [
        (ConfigError, "Configuration problem"),
        (MissingApiKey, "No API key"),
        (ServerUnreachable, "Model server unreachable"),
        (AuthRejected, "API key rejected"),
        (UnknownModel, "Unknown model"),
        (GitRefused, "Git is in the middle of something"),
        (SandboxUnavailable, "No sandbox for the tests"),
        (SessionElsewhere, "Another session works on this repository"),
    ]
    for kind, title in titles:
        if isinstance(err, kind):
            return title
    if "test command" in str(err):
        return "No test command"
    return "Cannot start"


def startup_url(options: RunOptions, err: UserError) -> str | None:
    """The model server URL a key or server problem is about (None for other problems)."""
    from tui_engineer.llm.errors import LLMError

    if not isinstance(err, LLMError):
        return None
    try:
        from tui_engineer.config import load_settings
        from tui_engineer.vcs import find_repo_root

        settings = load_settings(find_repo_root(options.repo), options.flags).settings
    except UserError:
        return None
    return (settings.base_url or DEFAULT_URL).rstrip("/")


_THEME_LINE = re.compile(r"^\s*theme\s*=.*$", re.MULTILINE)
_TABLE = re.compile(r"^\s*\[", re.MULTILINE)


def save_theme_choice(name: str, path: Path | None = None) -> None:
    """Set `theme = "name"` in the user config file, keeping everything else as written."""
    from tui_engineer.config.layers import user_config_path

    path = path or user_config_path()
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        line = f'theme = "{name}"'
        head_end = m.start() if (m := _TABLE.search(text)) else len(text)
        head, tail = text[:head_end], text[head_end:]
        if _THEME_LINE.search(head):
            head = _THEME_LINE.sub(line, head, count=1)
        else:
            head = line + "\n" + head
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(head + tail, encoding="utf-8")
    except OSError:
        pass  # a read-only config folder must not break the app; the theme still changes


class StartupFlow:
    """Mixed into `TuiEngineerApp` (before `App`): prepares the session, turning each start-up
    problem into a screen, until it is ready or the user gives up."""

    options: RunOptions
    init_first: bool
    deterministic: bool
    opening_notes: tuple[str, ...]  # said once the checks pass (serve: why a tab is new)
    prepared: Prepared | None
    ready: bool
    check_retries: int
    check_timeout: float
    status: StatusBar
    chat: ChatPane

    @work(group="startup", exclusive=True, exit_on_error=False)
    async def startup(self) -> None:
        self.status.phase = "checking the repository and settings"
        if self.init_first:
            from tui_engineer.vcs import init_repo

            await asyncio.to_thread(init_repo, self.options.repo)
        prepared = await self._prepare_until_ok()
        if prepared is None:
            self.exit(2, return_code=2)
            return
        await self._became_ready(prepared)

    async def _prepare_until_ok(self) -> Prepared | None:
        runner = await load_engine()
        from tui_engineer.session.prepare import WRITE_TESTS_COMMAND, NoTestCommand
        from tui_engineer.vcs import DirtyTree, NotARepo

        while True:
            try:
                prepared = await asyncio.to_thread(runner.prepare, self.options)
                await self._check_server(prepared)
                return prepared
            except NotARepo:
                if not await self._offer_init():
                    return None
            except DirtyTree:
                if not await self._ask_dirty():
                    return None
            except NoTestCommand:
                choice = await self.push_screen_wait(NoTestsScreen(WRITE_TESTS_COMMAND))
                if choice is None:
                    return None
                if choice != "retry":
                    self.options.no_tests = choice
            except UserError as err:
                url = await asyncio.to_thread(startup_url, self.options, err)
                screen = ProblemScreen(problem_title(err), str(err), url)
                if not await self.push_screen_wait(screen):
                    return None

    async def _check_server(self, prepared: Prepared) -> None:
        """One quick look at the server, with its own small retry count: a server that is down
        gets its screen (with Retry) in a second or two, not after the session's backoff."""
        from tui_engineer.llm import ModelClient

        if getattr(prepared.model, "check_connection", None) is None:
            return  # a replayed run needs no server
        s = prepared.settings
        checker = ModelClient(
            model=s.model,
            base_url=s.base_url,
            api_key=s.api_key,
            api_key_env=s.api_key_env,
            max_retries=self.check_retries,
            timeout=self.check_timeout,
        )
        self.status.busy = f"checking {checker.base_url}"
        try:
            await checker.check_connection()
        except UserError:
            await prepared.model.aclose()
            raise
        finally:
            await checker.aclose()
            self.status.busy = ""

    async def _offer_init(self) -> bool:
        from tui_engineer.vcs import init_repo

        if not await self.push_screen_wait(InitRepoScreen(self.options.repo)):
            return False
        root = await asyncio.to_thread(init_repo, self.options.repo)
        self.notify(f"Created a git repository in {root}", title="git init")
        return True

    async def _ask_dirty(self) -> bool:
        from tui_engineer.vcs import find_repo_root, handle_dirty, repo_state

        root = await asyncio.to_thread(find_repo_root, self.options.repo)
        state = await asyncio.to_thread(repo_state, root)
        choice = await self.push_screen_wait(DirtyTreeScreen(state.changed_files))
        if choice is None:
            return False
        if choice == "include":
            self.options.allow_dirty = True
        done = await asyncio.to_thread(handle_dirty, root, choice)
        self.notify(done, title="Uncommitted changes", timeout=8)
        await self.chat.note(done)
        return True

    async def _became_ready(self, prepared: Prepared) -> None:
        self.prepared = prepared
        self.ready = True
        if prepared.settings.theme in self.available_themes:
            self.theme = prepared.settings.theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        tree_slot = self.screen_stack[0].query_one("#pane-tree")
        await tree_slot.mount(RepoTree(prepared.root, id="tree"))
        self.status.model = prepared.settings.model
        # Nothing spent yet: $0 where the price is known, else the same words as later.
        self.status.usd = 0.0 if price_for(prepared.settings.model) else None
        self.status.sandbox = prepared.settings.sandbox
        self.status.bwrap = prepared.bwrap.origin if prepared.bwrap else ""
        self.status.max_tokens = prepared.settings.max_tokens
        self.status.max_usd = prepared.settings.max_usd
        # `m` pressed during start-up already chose the mode: the settings do not undo it.
        self.status.approval = self.status.approval or prepared.settings.approval
        self.status.phase = "ready"
        for sentence in self.opening_notes:  # e.g. serve: why this tab did not resume
            await self.chat.note(sentence)
        self.opening_notes = ()
        for sentence in prepared.notices:  # e.g. an interrupted accept finished: say it now
            await self.chat.note(sentence)
        prepared.notices.clear()
        if prepared.resumed is not None:  # --resume: what happened before, then on from there
            from tui_engineer.tui.history import show_history

            await show_history(self, prepared.resumed)
            self.start_session(prepared.resumed.request)
        elif self.options.request:
            await self.chat.user_message(self.options.request, queued=False)
            self.start_session(self.options.request)
        else:
            await self.chat.note("Type what you want done below and press Enter.")

    def _theme_changed(self, _theme: object) -> None:
        if not self.deterministic:
            save_theme_choice(self.theme)
