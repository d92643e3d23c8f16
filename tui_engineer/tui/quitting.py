"""Every way the app ends: the quit keys (q, Ctrl+C, Ctrl+Q), a stop signal (SIGTERM from a
CI timeout or `kill`, SIGHUP from a closed terminal) and a closed browser tab under
`tui-engineer serve`. Each one stops the engine and any test run and waits for their cleanup
(test processes killed, shadow worktree removed) before the app exits."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

from textual import messages
from textual.app import App
from textual.message import Message
from textual.worker import Worker

from tui_engineer.session.signals import add_stop_handlers
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.screens import QuitScreen
from tui_engineer.tui.terminal_gone import write_nowhere

STOP_BOUND = 60.0  # seconds a quit waits for the engine's cleanup (a shadow's removal: ~1 s)


async def _ended(worker: Worker[object]) -> None:
    with contextlib.suppress(Exception):  # its own failure or cancellation is said elsewhere
        await worker.wait()


class QuitAsked(Message):
    """A quit key, sent from the focused widget up to the app: it arrives behind any key
    pressed before it, which takes that same way (a key's binding runs once it reached the
    app)."""


class Quitting:
    """How the app stops, one per app: the app's `action_quit`, `on_quit_asked` and
    `on_exit_app` hand over to `asked` and `now`; `install` and `remove` the stop signals'
    handlers on mount and unmount."""

    def __init__(
        self, app: App[int], controller: SessionController, busy: Callable[[str], None]
    ) -> None:
        self.app = app
        self.controller = controller
        self.busy = busy  # says what is under way in the status bar
        self.under_way = False  # a stop is under way (see `now`)
        self._remove: Callable[[], None] = lambda: None

    def install(self) -> None:
        """A CI timeout or a closed terminal stops the work and removes the shadow, no question."""
        self._remove = add_stop_handlers(self._stop_signal)

    def remove(self) -> None:
        self._remove()

    @property
    def in_flight(self) -> str | None:
        """What quitting would interrupt, or None."""
        if self.controller.tests_running:
            return "A test run is going."
        if self.controller.working:
            return "A session is under way."
        return None

    async def stop_work(self) -> None:
        """Cancel the engine and any test run, and wait for their cleanup (the engine's
        finally-blocks kill test processes and remove the shadow worktree), for at most
        STOP_BOUND: a quit never hangs; what a cleanup cut there leaves, the next start
        removes."""
        workers = [
            w
            for w in (self.controller.tests, self.controller.engine)
            if w is not None and w.is_running
        ]
        for worker in workers:
            worker.cancel()
        if not workers:
            return
        waits = [asyncio.ensure_future(_ended(worker)) for worker in workers]
        _, late = await asyncio.wait(waits, timeout=STOP_BOUND)
        for waiting in late:
            waiting.cancel()
        if late:
            self.busy(f"the work did not stop within {STOP_BOUND:g} s: quitting anyway")

    async def key(self) -> None:
        """q, Ctrl+C, Ctrl+Q. Handled in line behind the keys pressed before it: Ctrl+C is the
        app's priority binding, seen at once, while a key pressed just before it (`a`, then
        Ctrl+C Ctrl+C within 10 ms) still makes its way from the focused widget up to the app,
        whose binding acts on it there; the quit follows that way behind it, so the accept it
        gives is kept (committed), not dropped."""
        focused = self.app.focused
        if focused is None:
            await self.asked()
        else:
            focused.post_message(QuitAsked())  # the path an unbound key takes, behind it

    async def asked(self) -> None:
        doing = self.in_flight
        if doing is None:
            await self.stop_work()
            self.app.exit(0)
            return
        if isinstance(self.app.screen, QuitScreen):
            # Asked twice (Ctrl+C, Ctrl+C): the human means it.
            self.app.screen.dismiss(True)
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self.now()

        self.app.push_screen(QuitScreen(doing), answered)

    def exit_app(self, event: messages.ExitApp) -> None:
        # Under `tui-engineer serve` a closed browser tab (or the server stopping) arrives as a
        # bare ExitApp from Textual's web driver: no key, no signal, no exit() call (so no return
        # code yet). Stop as on a signal, so the session's cleanup ends before the app does.
        if self.app.return_code is None:
            event.prevent_default()
            self.now()

    def _stop_signal(self, sig: signal.Signals) -> None:
        if sig == signal.SIGHUP:  # the terminal closed: nothing can be shown or read any more
            write_nowhere(self.app._driver)
        self.now()

    def now(self) -> None:
        """Stop the work and exit, once. A second request (Ctrl+C at `serve` both signals the
        app and closes its tab) must not restart the stop: an exclusive worker would cancel the
        first one, and with it the engine's cleanup it awaits, leaving shadow worktrees."""
        if self.under_way:
            return
        self.under_way = True
        self.app.run_worker(self._stop_and_exit(), group="quit")

    async def _stop_and_exit(self) -> None:
        self.busy("stopping: cleaning up the shadow worktree")
        await self.stop_work()
        self.app.exit(0)
