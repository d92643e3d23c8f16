"""Start-up: the checks before a session can run, each problem shown as a screen (`StartUp`,
one per app, run as the app's "startup" worker), then the app made ready: the Files pane, the
status bar's facts, the chosen theme remembered, and the request (or a resumed session)
started."""

from __future__ import annotations

import asyncio
import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from tui_engineer.base import start_collection
from tui_engineer.base.errors import UserError
from tui_engineer.llm.usage import price_for
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.screens import (
    DirtyTreeScreen,
    InitRepoScreen,
    NoTestsScreen,
    ProblemScreen,
    TakeOverScreen,
)

if TYPE_CHECKING:
    from tui_engineer.session.prepare import Prepared
    from tui_engineer.session.start import Problem
    from tui_engineer.tui.controller import SessionController


async def load_engine() -> ModuleType:
    """The session runner and the engine under it, imported in a thread: the app paints its
    first frame without them and stays responsive while they load (benchmarks/first_paint.py)."""
    return await asyncio.to_thread(importlib.import_module, "tui_engineer.session.run")


class StartingApp(Protocol):
    """What of the app the start-up uses (tui/app.py's `TuiEngineerApp`; it is not imported
    here, which it imports)."""

    options: RunOptions
    controller: SessionController
    status: StatusBar
    chat: ChatPane
    check_retries: int
    check_timeout: float
    init_first: bool
    deterministic: bool
    opening_notes: tuple[str, ...]  # said once the checks pass (serve: why a tab is new)
    theme: str
    available_themes: dict[str, Any]
    theme_changed_signal: Any
    session_screen: Any

    def start_session(self, request: str) -> None: ...
    def exit(self, result: int | None = None, return_code: int = 0) -> None: ...
    def notify(self, message: str, *, title: str = "", timeout: float | None = None) -> None: ...
    async def push_screen_wait(self, screen: Any) -> Any: ...


class StartUp:
    """Prepares the app's session, turning each start-up problem into a screen, until it is
    ready or the user gives up."""

    def __init__(self, app: StartingApp) -> None:
        self.app = app
        self.options: RunOptions = app.options
        self.controller: SessionController = app.controller
        self.status: StatusBar = app.status
        self.chat: ChatPane = app.chat

    async def run(self) -> None:
        app = self.app
        self.status.phase = "checking the repository and settings"
        await load_engine()
        from tui_engineer.session.start import ServerCheck, start

        try:
            prepared = await start(
                self.options,
                self._answer_problem,
                server=ServerCheck(app.check_retries, app.check_timeout),
                init_first=app.init_first,
                busy=self._show_busy,
                said=self._say_fix,
            )
        except UserError:
            app.exit(2, return_code=2)
            return
        finally:
            start_collection.release(collect=True)  # the model client is made: the imports are done
        await self._became_ready(prepared)

    async def _answer_problem(self, problem: Problem) -> str | None:
        """Each start-up problem as its screen; the user's choice, or None to give up."""
        from tui_engineer.session.prepare import WRITE_TESTS_COMMAND

        start_collection.release(collect=True)  # the human reads for as long as they like

        if problem.kind == "not_a_repo":
            return (
                "init"
                if await self.app.push_screen_wait(InitRepoScreen(self.options.repo))
                else None
            )
        if problem.kind == "dirty":
            return await self.app.push_screen_wait(DirtyTreeScreen(problem.files))
        if problem.kind == "no_tests":
            return await self.app.push_screen_wait(NoTestsScreen(WRITE_TESTS_COMMAND))
        if problem.kind == "elsewhere":
            return await self.app.push_screen_wait(TakeOverScreen(problem.message))
        screen = ProblemScreen(problem.title, problem.message, problem.url)
        return "retry" if await self.app.push_screen_wait(screen) else None

    def _show_busy(self, text: str) -> None:
        self.status.busy = text

    async def _say_fix(self, sentence: str) -> None:
        title = "git init" if sentence.startswith("Created a git") else "Uncommitted changes"
        if sentence.startswith("Took over"):
            title = "Taken over"
        self.app.notify(sentence, title=title, timeout=8)
        await self.chat.note(sentence)

    async def _became_ready(self, prepared: Prepared) -> None:
        from tui_engineer.session.spare_ahead import start_spare_ahead

        app = self.app
        start_spare_ahead(prepared)  # while the human types the first request
        self.controller.prepared = prepared
        self.controller.ready = True
        if prepared.settings.theme in app.available_themes:
            app.theme = prepared.settings.theme
        app.theme_changed_signal.subscribe(app, self._theme_changed)
        tree_slot = app.session_screen.query_one("#pane-tree")
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
        for sentence in app.opening_notes:  # e.g. serve: why this tab did not resume
            await self.chat.note(sentence)
        app.opening_notes = ()
        for sentence in prepared.notices:  # e.g. an interrupted accept finished: say it now
            await self.chat.note(sentence)
        prepared.notices.clear()
        if prepared.resumed is not None:  # --resume: what happened before, then on from there
            from tui_engineer.tui.history import show_history

            await show_history(app, prepared.resumed)
            app.start_session(prepared.resumed.request)
        elif self.options.request:
            await self.chat.user_message(self.options.request, queued=False)
            app.start_session(self.options.request)
        else:
            await self.chat.note("Type what you want done below and press Enter.")

    def _theme_changed(self, _theme: object) -> None:
        if not self.app.deterministic:
            from tui_engineer.session.preferences import save_theme_choice

            save_theme_choice(self.app.theme)
