"""The Textual app: the session's screen, the engine as a worker, and what is app-wide.

The app holds no engine logic: it runs `prepare`/`run_prepared`, hands each engine event to
the panes that own what it changes (`EngineEvent`, tui/engine_messages.py: each pane's
`@on(heard(ev.X))` handlers, then the app's own, app_engine_events.py, which also shows the
engine's questions asked through `TuiReviewer`, bridge.py). Start-up problems are screens
(startup.py).
Quitting, by key, signal or a closed browser tab, is in quitting.py. The panes, their layout
and the keys that work on any pane are the session's screen's (session_screen.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_downloads_path
from textual import messages, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Markdown
from textual.worker import Worker, WorkerState

from tui_engineer.base.errors import UserError
from tui_engineer.base.names import readable
from tui_engineer.engine import events as ev
from tui_engineer.session.options import RunOptions
from tui_engineer.tui.app_engine_events import AppEngineEvents
from tui_engineer.tui.bridge import Asked, EngineEvent, event_poster
from tui_engineer.tui.controller import Answered, SessionController
from tui_engineer.tui.engine_messages import EngineMessage, deliver, engine_message
from tui_engineer.tui.layout import layout_path
from tui_engineer.tui.panes.chat import ChatPane
from tui_engineer.tui.panes.chat_input import SHELL_PREFIX, ChatInput
from tui_engineer.tui.panes.diff_pane import DiffPane
from tui_engineer.tui.panes.file_tree import RepoTree
from tui_engineer.tui.panes.plan import PlanPane
from tui_engineer.tui.panes.shell import ShellPane
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.panes.test_output import TestOutputPane
from tui_engineer.tui.quitting import QuitAsked, Quitting
from tui_engineer.tui.session_screen import SessionScreen
from tui_engineer.tui.startup import StartUp, load_engine
from tui_engineer.tui.themes import DEFAULT_THEME, register_themes
from tui_engineer.tui.worker_errors import STARTUP_FAILED, report_worker_error

if TYPE_CHECKING:  # the engine loads behind the first frame (startup.load_engine)
    from tui_engineer.engine.session import Session


class TuiEngineerApp(App[int]):
    """`options.request` empty: the app asks for a request in the chat box.
    `deterministic` (snapshots): no clock, no durations, no temp paths on screen."""

    CSS_PATH = "app.tcss"
    TITLE = "tui-engineer"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [  # the session's keys are its screen's (session_screen.py)
        Binding("q", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        options: RunOptions,
        *,
        init: bool = False,
        deterministic: bool = False,
        notes: tuple[str, ...] = (),
    ) -> None:
        super().__init__()
        self.options = options
        self.opening_notes = notes  # said in the chat once the start-up checks pass
        self.init_first = init
        self.deterministic = deterministic
        self.controller = SessionController(self.post_message)  # what the parts share
        self.check_retries = 1  # the start-up server check (tests set 0)
        self.check_timeout = 15.0
        # Remembered pane sizes; pictures and tests use the defaults unless they set a file.
        self.layout_file: Path | None = None if deterministic else layout_path()
        self._session_screen: SessionScreen | None = None
        self.quitter = Quitting(self, self.controller, self._say_busy)
        self.engine_events = AppEngineEvents(self)  # what the app itself shows of them

    # ----- the session's screen: its panes, their layout and the keys that work on any pane

    def _say_busy(self, text: str) -> None:
        self.status.busy = text

    def get_default_screen(self) -> SessionScreen:
        return self.session_screen

    @property
    def session_screen(self) -> SessionScreen:
        """Made when the app starts (the layout file is set by then); kept once the app has
        ended, for what its panes showed."""
        if self._session_screen is None:
            self._session_screen = SessionScreen(
                self.controller,
                self.options.repo,
                deterministic=self.deterministic,
                layout_file=self.layout_file,
            )
        return self._session_screen

    @property
    def plan_pane(self) -> PlanPane:
        return self.session_screen.plan_pane

    @property
    def chat(self) -> ChatPane:
        return self.session_screen.chat

    @property
    def chat_input(self) -> ChatInput:
        return self.session_screen.chat_input

    @property
    def diff(self) -> DiffPane:
        return self.session_screen.diff

    @property
    def test_pane(self) -> TestOutputPane:
        return self.session_screen.test_pane

    @property
    def shell_pane(self) -> ShellPane:
        return self.session_screen.shell_pane

    @property
    def status(self) -> StatusBar:
        return self.session_screen.status

    def on_mount(self) -> None:
        register_themes(self)
        self.theme = DEFAULT_THEME
        # With a request the keys must work from the first frame; without one the box takes it.
        if self.options.request:
            self.diff.focus()
        else:
            self.chat_input.focus()
        self.quitter.install()  # SIGTERM, SIGHUP: quitting.py
        # The checks (git, settings, the model client with its SDK import) start once the first
        # frame is on the terminal: they would otherwise compete with it for the interpreter.
        self.call_after_refresh(self.startup)

    def startup(self) -> None:
        """The start-up checks, each problem a screen (startup.py)."""
        checks = StartUp(self).run()
        self.run_worker(checks, group="startup", exclusive=True, exit_on_error=False)

    def apply_layout(self) -> None:
        if self.screen_stack:
            self.session_screen.apply_layout()

    def show_pane(self, key: str) -> None:
        if self.screen_stack:
            self.session_screen.show_pane(key)

    def on_unmount(self) -> None:
        self.quitter.remove()

    # ----- quitting: by key, by signal, by a closed browser tab (quitting.py)

    async def action_quit(self) -> None:
        await self.quitter.key()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the human types into the Shell pane's program, the priority keys seen before
        any widget (Ctrl-C, Ctrl-Q, Ctrl-P) are the program's: Ctrl-C interrupts it."""
        shell = self._session_screen.shell_pane if self._session_screen else None
        typing = shell is not None and shell.typing and self.screen is self._session_screen
        return not (typing and action in ("quit", "command_palette"))

    async def on_quit_asked(self, message: QuitAsked) -> None:
        message.stop()
        await self.quitter.asked()

    def on_exit_app(self, event: messages.ExitApp) -> None:
        self.quitter.exit_app(event)  # runs before Textual's own handler, which it can prevent

    @property
    def quitting(self) -> bool:
        """A stop is under way."""
        return self.quitter.under_way

    async def stop_work(self) -> None:
        """Cancel the engine and any test run, and wait for their cleanup."""
        await self.quitter.stop_work()

    # ----- the session worker

    def start_session(self, request: str) -> None:
        self.options.request = request
        # Until the session says it started: on a big repository its first shadow (a checkout
        # of every file) takes seconds, and "ready" would say nothing happens.
        self.status.phase = "starting the session"
        self.chat_input.placeholder = "Message the model (sent with its next call)"
        self.diff.focus()  # the request is sent: the review keys work; `c` comes back here
        self.controller.engine = self.run_worker(
            self._run_session(), group="engine", exit_on_error=False
        )
        self.refresh_bindings()

    async def _run_session(self) -> None:
        try:
            runner = await load_engine()
            from tui_engineer.session.start import start

            # A later request checks afresh (its server was asked at the first one).
            prepared = self.controller.prepared or await start(self.options, server=None)
            # run_prepared closes its model: the next session re-prepares
            self.controller.prepared = None
            self.options.resume = None  # resumed once; a new request is a new session
            result = await runner.run_prepared(
                prepared,
                self.controller.reviewer,
                event_poster(self.post_message),
                inbox=self.controller.inbox,
                on_session=self._got_session,
            )
            self.status.phase = f"finished: {result.outcome} — {result.message}"
        except UserError as err:
            await self.chat.note(str(err), error=True)
            self.notify(str(err), title="Session stopped", severity="error", timeout=15)
            self.status.phase = "stopped"
        finally:
            self.controller.drop_undelivered()
            self.chat.not_delivered()
            self.controller.session = None
            self.controller.server_paused = False
            self.plan_pane.stop_active()  # no "fixing 2/3" left behind by an error or a quit
            self.controller.finished_sessions += 1
            self.status.busy = ""
            self.status.stop_clock()
            self.refresh_bindings()

    def _got_session(self, session: Session) -> None:
        self.controller.got_session(session, self.status.approval)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker's bug is said, with the way out, never swallowed (worker_errors.py)."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            await self.show_worker_error(event.worker)

    async def show_worker_error(self, worker: Worker[object]) -> None:
        """Also for a pane's own worker (the Files pane's listing): its state changes reach
        only the pane."""
        await report_worker_error(worker, self.notify, self.chat, self.status)

    # ----- the engine's events: the panes first, then what the app itself shows

    async def on_engine_event(self, message: EngineEvent) -> None:
        # Not once the app is shutting down: Textual removes the panes' widgets first, then
        # handles what is still queued (the engine's last events, as its stop cleaned up).
        if self._running:
            await self.deliver(message.event)

    async def deliver(self, event: ev.Event) -> None:
        """One engine event to the panes that own what it changes, in a fixed order, each by
        its message class (tui/engine_messages.py); a resumed session's past goes this way
        too (history.py)."""
        owners = (self.plan_pane, self.diff, self.test_pane, self.status, self.chat, self)
        await deliver(engine_message(event), owners)

    @on(EngineMessage)
    def _heard(self, message: EngineMessage[ev.Event]) -> None:
        """Every engine event, after its panes: what the app itself shows of it."""
        self.engine_events.hear(message.event)

    def on_asked(self, message: Asked) -> None:
        self.engine_events.asked(message)

    def on_answered(self, message: Answered) -> None:
        self.engine_events.answered(message)

    # ----- chat

    @on(ChatInput.Submitted, "#chat-input")
    async def _chat_submitted(self, event: ChatInput.Submitted) -> None:
        text = event.value.strip()
        event.input.clear()
        if not text:
            return
        if text.startswith(SHELL_PREFIX):  # the human's own command, in the Shell pane
            self.session_screen.run_shell(text.removeprefix(SHELL_PREFIX))
            return
        if not self.controller.ready:
            if self.status.phase == STARTUP_FAILED:  # said in the chat: not "in a moment"
                self.notify(
                    "The start-up failed (see the chat): press q to quit.", severity="error"
                )
            else:
                self.notify("Still starting up: send it again in a moment.", severity="warning")
            return
        running = self.controller.working
        text, shown = self.shell_pane.with_attached(
            text
        )  # a command's output the human sent with `y`
        await self.chat.user_message(shown, queued=running, sent=text)
        if running:
            self.controller.inbox.put_nowait(text)
        else:
            self.start_session(text)

    # ----- tree and plan selection

    @on(RepoTree.FileSelected)
    def _file_selected(self, event: RepoTree.FileSelected) -> None:
        self.show_pane("diff")
        if not self.diff.focus_file(event.path):
            self._show_file(event.path)

    @work(group="file", exclusive=True, exit_on_error=False)
    async def _show_file(self, rel: str) -> None:
        root = self.screen_stack[0].query_one(RepoTree).root_path
        try:
            data = await asyncio.to_thread((root / rel).read_bytes)
        except OSError as err:
            self.notify(f"{readable(rel)}: cannot show ({err.strerror})", severity="warning")
            return
        if b"\0" in data[:8192]:
            self.notify(f"{readable(rel)} is a binary file", severity="warning")
            return
        # Bytes that are not UTF-8 (a Latin-1 file) read with U+FFFD, as in the diff.
        self.diff.show_file(rel, data.decode("utf-8", "replace"))

    @on(RepoTree.FilesChanged)
    async def _files_changed(self, event: RepoTree.FilesChanged) -> None:
        touched = sorted(self.controller.changes.intersection(event.paths))
        proposal = self.controller.reviewer.proposal
        if touched and proposal is not None:
            # Only the human's edits make it stale, not the commit of the step before (with the
            # next step prepared during review, its proposal can come before that news).
            root = self.screen_stack[0].query_one(RepoTree).root_path
            from tui_engineer.session.repository import edited_by_user

            touched = await asyncio.to_thread(edited_by_user, root, touched)
        if touched and proposal is not None:
            self.plan_pane.set_status(proposal.step.index, "stale")
            self.diff.offer_user_edits(touched)  # take them into the step

    @on(Markdown.LinkClicked)
    def _link_clicked(self, event: Markdown.LinkClicked) -> None:
        """An "edited `calc.py`" link in the chat: that file's part of the diff."""
        if event.href.startswith("diff:"):
            event.stop()
            self.show_pane("diff")
            self.diff.focus_file(event.href.removeprefix("diff:"))
            self.diff.focus()

    @on(PlanPane.StepChosen)
    def _step_chosen(self, event: PlanPane.StepChosen) -> None:
        info = event.info
        files = f"\nFiles: {', '.join(info.files)}" if info.files else ""
        self.notify(f"{info.description or info.title}{files}", title=f"Step {info.index}")

    # ----- command palette

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # The session's keys, bound on its screen (under the palette, which is a screen too).
        for binding in SessionScreen.BINDINGS:
            if isinstance(binding, Binding) and binding.show:
                yield SystemCommand(
                    binding.description,
                    f"{binding.description} (key: {binding.key})",
                    _runner(self.session_screen, binding.action),
                )

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        # Textual saves to the user's downloads folder, which many machines (servers, containers,
        # fresh accounts) do not have: the palette's Screenshot then failed with no reason given.
        # Make the folder; the notification names the file saved.
        folder = Path(path) if path else user_downloads_path()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self.notify(f"Cannot save a screenshot in {folder}: {error}", severity="error")
            return None
        return super().deliver_screenshot(filename, str(folder), time_format)


def _runner(screen: Screen, action: str):  # -> Callable[[], Awaitable[None]]
    async def run() -> None:
        await screen.run_action(action)

    return run
