"""One ACP session: the engine's session run in a task, its events sent as updates in order, its
reviews asked as permission requests, and the turns of the conversation around it.

A turn (`session/prompt`) ends when the engine asks "what is still wrong?" (the question is the
turn's last message; the next prompt answers it), when the session finishes, or on
`session/cancel` (the engine's task is cancelled: its shadow removed, its test processes ended,
an open permission request dropped)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import PermissionOption, ToolCallUpdate

from tui_engineer.acp import slash
from tui_engineer.acp.shell import SHELL_PREFIX, ShellCommands, shell_command
from tui_engineer.acp.updates import Translator, Update, say_text
from tui_engineer.base.errors import UserError
from tui_engineer.engine import events as ev
from tui_engineer.engine.inbox import Inbox
from tui_engineer.engine.reviews.review import Decision, Proposal, Verdict
from tui_engineer.engine.session import Session, SessionResult
from tui_engineer.session.prepare import Prepared
from tui_engineer.session.run import run_prepared
from tui_engineer.session.tool_servers import KeptTools

log = logging.getLogger("tui_engineer.acp")

ACCEPT, ALWAYS, REJECT, SKIP = "accept", "always", "reject", "skip"
# One option of each of the protocol's kinds, so a client that answers by kind (or shows the
# kind) tells them apart: Reject proposes the step again, Skip leaves it for good.
OPTIONS = [
    PermissionOption(option_id=ACCEPT, name="Accept: commit this step", kind="allow_once"),
    PermissionOption(
        option_id=ALWAYS,
        name="Accept, and commit steps whose tests pass unasked from now on (auto)",
        kind="allow_always",
    ),  # fmt: skip
    PermissionOption(option_id=REJECT, name="Reject: propose it again", kind="reject_once"),
    PermissionOption(option_id=SKIP, name="Skip this step", kind="reject_always"),
]
# A proposal with no change (the model sent no edit): nothing to accept.
NOTHING_OPTIONS = [
    PermissionOption(option_id=REJECT, name="Ask the model again", kind="reject_once"),
    PermissionOption(option_id=SKIP, name="Skip this step", kind="reject_always"),
]
AUTO_FROM_NOW = (
    "Mode: auto from now on in this session: a step whose tests pass is committed unasked; "
    "one that fails, or that no test verified, is still asked about (`/mode ask` goes back)."
)
# Rejections of one step after which it is skipped: a permission answer carries no reason, so the
# model has little to go on, and a client that rejects everything must still see the turn end.
MAX_REJECTIONS = 3
REJECTED = "rejected in the editor (no reason given)"
STILL_WRONG = (
    "What is still wrong? Say it in your next message and it becomes new steps (`!command` "
    "runs a command in your terminal, its output sent with your next message); "
    "answer `done` to finish the session."
)


class AcpSession(slash.SlashCommands, ShellCommands):
    def __init__(
        self,
        session_id: str,
        client: Client,
        prepare: Callable[[str, str | None], Awaitable[Prepared]],
        prepared: Prepared | None,
        approval: str,
    ) -> None:
        self.id = session_id
        self.client = client
        # A fresh start-up for each run after the first: (request, the run to resume or None).
        self._prepare = prepare
        self._prepared = prepared
        # The engine run a cancel stopped: the next prompt goes on with it (its step takes the
        # prompt in as chat, as the TUI's running step does) rather than planning anew.
        self._stopped: str | None = None
        self._answered: str | None = None  # a prompt that answers "what is still wrong?" early
        self._held: str | None = None  # a prompt for the model once a proposal is shown again
        self.approval = approval
        self.engine: Session | None = None
        self.translator = Translator(prepared.root if prepared else None)  # type: ignore[arg-type]
        self.translator.shadow = self._shadow_path
        self.translator.window = self._window
        self.inbox: asyncio.Queue[str] = Inbox()  # the session hears each message
        self._outbox: asyncio.Queue[Update] = asyncio.Queue()
        self._loop, self._thread = asyncio.get_running_loop(), threading.get_ident()
        self._sender = asyncio.ensure_future(self._send_updates())
        self._task: asyncio.Task[None] | None = None
        self._turn: asyncio.Future[str] | None = None
        self._answer: asyncio.Future[str] | None = None  # "what is still wrong?" awaits a prompt
        self._rejections: dict[int, int] = {}
        self._skip = False  # /skip: the next review skips its step unasked
        self.reads_buffers = False  # the client offers fs/read_text_file: the model sees them
        # The editor's MCP servers, started by the first run and kept for every later request.
        self.tools = KeptTools()

    # ----- updates, in order

    def emit(self, event: ev.Event) -> None:
        """The engine's event sink: translated now (a proposal's files are read while the shadow
        holds it), sent by `_send_updates` in order."""
        try:
            updates = self.translator.updates(event)
        except Exception:  # noqa: BLE001 - a display problem must not end the session
            log.exception("could not show %s", event.type)
            return
        if threading.get_ident() == self._thread:
            for update in updates:
                self._outbox.put_nowait(update)
        else:  # an event from a worker thread: the queue belongs to the loop
            for update in updates:
                self._loop.call_soon_threadsafe(self._outbox.put_nowait, update)

    def offer_commands(self) -> None:
        """The slash commands, for the editor's prompt box (queued: sent in order)."""
        self._outbox.put_nowait(slash.available())

    def _window(self) -> int | None:
        engine = self.engine
        return getattr(engine.rt.model, "context_window", None) if engine is not None else None

    def say(self, text: str) -> None:
        self._outbox.put_nowait(say_text(text))

    async def _send_updates(self) -> None:
        gone = False
        while True:
            update = await self._outbox.get()
            try:
                if not gone:
                    await self.client.session_update(self.id, update)  # type: ignore[arg-type]
            except ConnectionError:  # the client went away: the connection's end stops us
                gone = True
            except Exception:  # noqa: BLE001 - one update not shown must not stop the rest
                log.exception("could not send an update")
            finally:
                self._outbox.task_done()

    async def flush(self) -> None:
        await self._outbox.join()

    def _shadow_path(self) -> Any:
        return self.engine.rt.shadow.path if self.engine is not None else None

    async def tell(self, updates: list[Update]) -> None:
        """Updates made elsewhere (a loaded session's history), in order with the rest."""
        for update in updates:
            self._outbox.put_nowait(update)
        await self.flush()

    # ----- turns

    async def prompt(self, text: str) -> str:
        """One turn: returns its stop reason ("end_turn" or "cancelled"). A slash command
        (acp/slash.py) is done, never sent to the model."""
        if (command := slash.parse(text)) is not None:
            return await self.command(*command)
        if text.lstrip().startswith(SHELL_PREFIX):  # the human's own command (acp/shell.py)
            return await self.shell(shell_command(text))
        text = self.with_attached(text)
        if self._turn is not None and not self._turn.done():
            # A prompt while a turn runs: chat for the model's next call (as in the TUI).
            self.inbox.put_nowait(text)
            return await asyncio.shield(self._turn)
        return await self._start_turn(text)

    async def _start_turn(self, text: str | None) -> str:
        """A turn that answers the question asked, or (re)starts the engine's run; `text`
        None: going on with a stopped run with no word for the model (/skip)."""
        self._turn = asyncio.get_running_loop().create_future()
        if self._answer is not None and not self._answer.done():
            self._answer.set_result(text)  # "what is still wrong?" answered: the session goes on
        else:
            self._task = asyncio.ensure_future(self._run(text))
        return await asyncio.shield(self._turn)

    def _end_turn(self, reason: str) -> None:
        if self._turn is not None and not self._turn.done():
            self._turn.set_result(reason)

    async def _run(self, text: str | None) -> None:
        """A whole engine session: for the request of the turn that started it, or going on
        with a stopped (or loaded) one, `text` then being the user's word to it."""
        try:
            prepared, self._prepared = self._prepared, None
            if prepared is None:
                prepared = await self._next_run(text)
            self._going_on(prepared, text)
            prepared.kept_tools = self.tools
            result = await run_prepared(
                prepared, self, self.emit, self.inbox, on_session=self._started
            )
            ending = _finished(result)
        except UserError as err:
            ending = str(err)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - a bug of ours: say_text, never a traceback
            from tui_engineer.base.crash import internal_error_message

            ending = internal_error_message(err)
        finally:
            self.engine = None
        # Ended (a cancel says its own): chat no call took is dropped, and a run the session
        # ended before it finished (the suite on the starting commit, say) is not left open.
        self._drop_undelivered()
        self._skip = False
        for update in self.translator.cut_off("the session ended before it finished"):
            self._outbox.put_nowait(update)
        self.say(ending)
        await self.flush()
        self._end_turn("end_turn")

    def _going_on(self, prepared: Prepared, text: str | None) -> None:
        """Where the prompt `text` goes: a new request, or the user's word to a resumed run."""
        resumed = prepared.resumed
        self.translator.root = prepared.root
        if text is None:  # no word for the model
            return
        if resumed is None:
            prepared.options.request = text
            self.translator.new_plan()
        elif resumed.under_review is not None:
            # Its proposal comes back for review (tests rerun, no model call); the prompt
            # goes with the next model call after that, a re-proposal if it is rejected.
            self._held = text
        elif resumed.pending is not None:
            self.inbox.put_nowait(text)  # chat for the step proposed again
        else:
            self._answered = text  # it stopped at "what is still wrong?"

    def _drop_undelivered(self) -> None:
        """Chat no model call took is for the steps it was typed for only: once they are done,
        it never goes with a later request's calls (said, so nothing is lost unseen)."""
        while not self.inbox.empty():
            text = self.inbox.get_nowait()
            self.say(f"(Not sent to the model: “{text}”; the steps it was for are done.)")

    async def _next_run(self, text: str | None) -> Prepared:
        stopped, self._stopped = self._stopped, None
        if stopped is not None:
            try:
                return await self._prepare(text or "", stopped)
            except UserError as err:  # nothing to go on with (stopped before its plan, say)
                if text is None:
                    raise
                log.info("not resuming %s: %s", stopped, err)
        if text is None:
            raise UserError("No stopped step to go on with.")
        return await self._prepare(text, None)

    def _started(self, session: Session) -> None:
        self.engine = session
        self._record_mode(session)
        if self.reads_buffers:
            session.rt.read_buffer = self._read_buffer

    async def _read_buffer(self, path: str) -> str | None:
        """A file of the repository as the editor holds it (unsaved changes included), read
        with fs/read_text_file; None when the editor cannot."""
        root = self.translator.root
        try:
            answer = await self.client.read_text_file(path=str(root / path), session_id=self.id)
        except Exception as err:  # noqa: BLE001 - the saved file is shown instead
            log.info("fs/read_text_file %s: %s", path, err)
            return None
        return answer.content

    def _record_mode(self, session: Session) -> None:
        """The engine's mode is the editor's; a change is recorded (session/load keeps it)."""
        if session.approval != self.approval:
            session.approval = self.approval
            session.rt.emit(ev.ApprovalChanged(approval=self.approval))

    def set_mode(self, approval: str, said: str = "") -> None:
        """The approval mode from the next proposal on. `said`: switched by the agent (an
        "always" answer, /mode), so the editor's mode picker is told, and the thread."""
        self.approval = approval
        if self.engine is not None:
            self._record_mode(self.engine)
        if said:
            self._outbox.put_nowait(update_current_mode(approval))
            self.say(said)

    async def cancel(self) -> None:
        """Stop the turn at once: the engine's task is cancelled (its shadow removed, its
        processes ended), then the prompt answers `cancelled`."""
        await self.stop_shell()  # a `!command` running: it stops (its turn answers cancelled)
        if self._turn is None or self._turn.done():
            return
        task = self._task
        if task is not None and not task.done():
            if self.engine is not None:  # a second cancel finds it gone: keep the first's
                self._stopped = self.engine.session_id
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._answer is not None and not self._answer.done():
            self._answer.cancel()
        self._answer = None
        for update in self.translator.cut_off("cancelled"):
            self._outbox.put_nowait(update)
        await self.flush()
        self._end_turn("cancelled")

    async def close(self) -> None:
        """The client went away: stop the engine, the sender and the MCP servers. The servers
        are stopped at once, beside the engine's stop: an editor gives its agent a moment
        (the ACP SDK: 2 s) before it kills it, which would leave them running."""
        servers = asyncio.ensure_future(self.tools.close())
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender
        await servers

    # ----- the Reviewer protocol, as permission requests

    async def review(self, proposal: Proposal) -> Decision:
        if self._skip:  # /skip said for the step in hand
            self._skip = False
            return Decision("skip", "skipped in the editor (/skip)")
        if self._held is not None:  # a proposal shown again: the prompt goes with the next call
            self.inbox.put_nowait(self._held)
            self._held = None
        await self.flush()  # the proposal's tool call is on screen before it is asked about
        step = proposal.step.index
        call = self.translator.proposal_call(step)
        if call is None:  # not shown (cannot happen), asked all the same
            call = f"step-{step}-review"
        title = f"Commit step {step}: {proposal.step.title}? Tests: {proposal.summary()}"
        asked = self.translator.asked_about(step, title)
        try:
            answer = await self.client.request_permission(
                session_id=self.id,
                tool_call=asked or ToolCallUpdate(tool_call_id=call, title=title),
                options=OPTIONS if proposal.diff.strip() else NOTHING_OPTIONS,
            )
        except ConnectionError:  # the editor went away: stop, nothing committed
            return Decision("stop", "the editor went away")
        outcome = answer.outcome
        if getattr(outcome, "outcome", "") != "selected":
            # "cancelled" means the turn is cancelled (the protocol's word): as session/cancel,
            # which a client sends with it, or may leave out.
            if self._turn is None or self._turn.done():
                return Decision("stop", "cancelled in the editor")
            asyncio.ensure_future(self.cancel())
            await asyncio.Event().wait()  # cancelled by it: the step stops here
        chosen = outcome.option_id  # type: ignore[union-attr]
        if chosen == ACCEPT:
            return Decision.accept()
        if chosen == ALWAYS:
            self.set_mode("auto", said=AUTO_FROM_NOW)
            return Decision.accept()
        if chosen == SKIP:
            return Decision("skip", "skipped in the editor")
        self._rejections[step] = self._rejections.get(step, 0) + 1
        if self._rejections[step] >= MAX_REJECTIONS:
            return Decision("skip", f"rejected {MAX_REJECTIONS} times")
        return Decision.reject(REJECTED)

    async def still_wrong(self) -> str | None:
        """Ends the turn with the question; the next prompt is the answer."""
        if self._answered is not None:  # given by the prompt that went on with the session
            answer, self._answered = self._answered, None
            return answer
        self._drop_undelivered()
        self.say(STILL_WRONG)
        await self.flush()
        self._answer = asyncio.get_running_loop().create_future()
        self._end_turn("end_turn")
        try:
            return await self._answer
        finally:
            self._answer = None

    async def verdict(self) -> Verdict | None:
        return None


def _finished(result: SessionResult) -> str:
    if result.outcome == "done":
        return f"Finished: {result.message}."
    return f"Session ended ({result.outcome}): {result.message}"
