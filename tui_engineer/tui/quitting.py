"""Every way the app ends: the quit keys (q, Ctrl+C, Ctrl+Q), a stop signal (SIGTERM from a
CI timeout or `kill`, SIGHUP from a closed terminal) and a closed browser tab under
`tui-engineer serve`. Each one stops the engine and any test run and waits for their cleanup
(test processes killed, shadow worktree removed) before the app exits."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

from textual import messages, work
from textual.message import Message

from tui_engineer.session.signals import add_stop_handlers
from tui_engineer.tui.controller import SessionController
from tui_engineer.tui.panes.status import StatusBar
from tui_engineer.tui.screens import QuitScreen
from tui_engineer.tui.terminal_gone import write_nowhere


class QuitAsked(Message):
    """A quit key, sent from the focused widget up to the app: it arrives behind any key
    pressed before it, which takes that same way (a key's binding runs once it reached the
    app)."""


class QuitFlow:
    """Mixed into `TuiEngineerApp` before `App`: its `action_quit` replaces Textual's, and its
    `on_exit_app` runs before Textual's own handler, which it can prevent. The app calls
    `install_stop_handlers` on mount and `remove_stop_handlers` on unmount."""

    controller: SessionController
    status: StatusBar

    quitting = False  # a stop is under way (see _quit_now)
    _remove_stop_handlers: Callable[[], None]

    def install_stop_handlers(self) -> None:
        """A CI timeout or a closed terminal stops the work and removes the shadow, no question."""
        self._remove_stop_handlers = add_stop_handlers(self._stop_signal)

    def remove_stop_handlers(self) -> None:
        self._remove_stop_handlers()

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
        finally-blocks kill test processes and remove the shadow worktree)."""
        workers = [
            w
            for w in (self.controller.tests, self.controller.engine)
            if w is not None and w.is_running
        ]
        for worker in workers:
            worker.cancel()
        for worker in workers:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await worker.wait()

    async def action_quit(self) -> None:
        """q, Ctrl+C, Ctrl+Q. Handled in line behind the keys pressed before it: Ctrl+C is the
        app's priority binding, seen at once, while a key pressed just before it (`a`, then
        Ctrl+C Ctrl+C within 10 ms) still makes its way from the focused widget up to the app,
        whose binding acts on it there; the quit follows that way behind it, so the accept it
        gives is kept (committed), not dropped."""
        focused = self.focused  # type: ignore[attr-defined]
        if focused is None:
            await self._quit_asked()
        else:
            focused.post_message(QuitAsked())  # the path an unbound key takes, behind it

    async def on_quit_asked(self, message: QuitAsked) -> None:
        message.stop()
        await self._quit_asked()

    async def _quit_asked(self) -> None:
        doing = self.in_flight
        if doing is None:
            await self.stop_work()
            self.exit(0)
            return
        if isinstance(self.screen, QuitScreen):
            # Asked twice (Ctrl+C, Ctrl+C): the human means it.
            self.screen.dismiss(True)
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now:
                self._quit_now()

        self.push_screen(QuitScreen(doing), answered)

    def on_exit_app(self, event: messages.ExitApp) -> None:
        # Under `tui-engineer serve` a closed browser tab (or the server stopping) arrives as a
        # bare ExitApp from Textual's web driver: no key, no signal, no exit() call (so no return
        # code yet). Stop as on a signal, so the session's cleanup ends before the app does.
        if self.return_code is None:
            event.prevent_default()
            self._quit_now()

    def _stop_signal(self, sig: signal.Signals) -> None:
        if sig == signal.SIGHUP:  # the terminal closed: nothing can be shown or read any more
            write_nowhere(self._driver)
        self._quit_now()

    def _quit_now(self) -> None:
        """Stop the work and exit, once. A second request (Ctrl+C at `serve` both signals the
        app and closes its tab) must not restart the stop: an exclusive worker would cancel the
        first one, and with it the engine's cleanup it awaits, leaving shadow worktrees."""
        if self.quitting:
            return
        self.quitting = True
        self._stop_and_exit()

    @work(group="quit")
    async def _stop_and_exit(self) -> None:
        self.status.busy = "stopping: cleaning up the shadow worktree"
        await self.stop_work()
        self.exit(0)
