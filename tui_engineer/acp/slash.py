"""Slash commands an editor offers in its prompt box (`available_commands_update`): the review
keys of the app for a client that has only a prompt. A prompt that starts with one of them is
the command, never a request or chat for the model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from tui_engineer.base.errors import UserError
from tui_engineer.engine.reviews.approval import APPROVALS, other
from tui_engineer.session.repository import undo_last_step

if TYPE_CHECKING:
    from tui_engineer.acp.updates import Translator
    from tui_engineer.engine.session import Session
    from tui_engineer.session.prepare import Prepared

COMMANDS = {
    "done": "Finish the session: the answer to “What is still wrong?” that ends it",
    "skip": "Skip the step in hand at its review (or the one a cancel stopped): nothing of "
    "it is committed",
    "undo": "Take back the last committed step of this session (refused if pushed or edited)",
    "mode": "Switch the approval mode: /mode ask or /mode auto (no word: the other one)",
    "tests": "Run the tests now, on the step in hand or the starting point",
}
HINTS = {"mode": "ask or auto"}


def available() -> object:
    """The update that lists them (sent at session/new and session/load)."""
    return update_available_commands(
        AvailableCommand(
            name=name,
            description=text,
            input=AvailableCommandInput(UnstructuredCommandInput(hint=HINTS[name]))
            if name in HINTS
            else None,
        )
        for name, text in COMMANDS.items()
    )


def parse(text: str) -> tuple[str, str] | None:
    """(command, its argument) when `text` is one of ours ("/mode auto"), else None."""
    word, _, rest = text.strip().partition(" ")
    if not word.startswith("/") or word[1:] not in COMMANDS:
        return None
    return word[1:], rest.strip()


MODE_SAID = {
    "ask": "Mode: ask from now on: you review every step before it is committed.",
    "auto": "Mode: auto from now on in this session: a step whose tests pass is committed "
    "unasked; one that fails, or that no test verified, is still asked about (`/mode ask` "
    "goes back).",
}


class SlashCommands:
    """The commands' work, mixed into AcpSession (acp/session.py), whose state it reads. Each
    is said in the thread; its prompt's turn ends when it is done, unless it goes on with the
    session (`/done` answering "What is still wrong?", `/skip` of a step a cancel stopped)."""

    # AcpSession's, read here
    _turn: asyncio.Future[str] | None
    _answer: asyncio.Future[str] | None
    _prepared: Prepared | None
    _stopped: str | None
    _skip: bool
    engine: Session | None
    approval: str
    translator: Translator
    say: Callable[[str], None]
    flush: Callable[[], Awaitable[None]]
    prompt: Callable[[str], Awaitable[str]]
    set_mode: Callable[..., None]
    _start_turn: Callable[[str | None], Awaitable[str]]

    async def command(self, name: str, arg: str) -> str:
        return await getattr(self, f"_slash_{name}")(arg)

    async def _told(self, text: str) -> str:
        self.say(text)
        await self.flush()
        return "end_turn"

    def _running(self) -> bool:
        turn = self._turn
        return turn is not None and not turn.done()

    def _asking(self) -> bool:
        answer = self._answer
        return answer is not None and not answer.done()

    def _resumed(self) -> object | None:
        prepared = self._prepared
        return prepared.resumed if prepared is not None else None

    async def _slash_mode(self, arg: str) -> str:
        mode = arg.lower() or other(self.approval)
        if mode not in APPROVALS:
            return await self._told(f"/mode {arg}: the modes are {', '.join(APPROVALS)}.")
        self.set_mode(mode, said=MODE_SAID[mode])
        await self.flush()
        return "end_turn"

    async def _slash_done(self, arg: str) -> str:
        resumed = self._resumed()
        at_question = resumed is not None and resumed.pending is None
        if self._asking() or at_question:
            return await self.prompt("done")
        return await self._told(
            "/done answers “What is still wrong?”, asked once the steps are done; nothing asks "
            "it now (cancel stops the step in hand, /skip skips it)."
        )

    async def _slash_skip(self, arg: str) -> str:
        if self._running():
            self._skip = True
            return await self._told("The step in hand is skipped at its review.")
        resumed = self._resumed()
        stopped = self._stopped is not None
        if stopped or (resumed is not None and resumed.pending is not None):
            self._skip = True
            return await self._start_turn(None)
        return await self._told("No step in hand to skip.")

    async def _slash_undo(self, arg: str) -> str:
        engine = self.engine
        if self._running():
            return await self._told("/undo works between turns: cancel first, or wait.")
        try:
            if engine is not None:
                await engine.undo_last()  # said by its event
                await self.flush()
                return "end_turn"
            root = self.translator.root
            return await self._told(await asyncio.to_thread(undo_last_step, root))
        except UserError as err:
            return await self._told(f"Cannot undo: {err}")

    async def _slash_tests(self, arg: str) -> str:
        engine = self.engine
        if engine is None or self._running():
            return await self._told(
                "/tests runs the tests while the session waits for you (at “What is still "
                "wrong?”); each step's tests run with it."
            )
        await engine.rerun_tests()  # shown as its execute tool call
        await self.flush()
        return "end_turn"
