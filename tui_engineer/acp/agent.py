"""The ACP agent: `initialize`, `session/new` (the start-up checks of every other command, their
sentence as the JSON-RPC error), `session/prompt`, `session/cancel`, `session/set_mode` (the
approval modes) and `session/load`. Each session's work lives in acp/session.py."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    EmbeddedResourceContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    SessionCapabilities,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    TextContentBlock,
)

from tui_engineer import __version__
from tui_engineer.acp.shell import is_terminal_uri, terminal_attachment
from tui_engineer.base.errors import UserError
from tui_engineer.engine.reviews.approval import APPROVALS
from tui_engineer.session.options import RunOptions

if TYPE_CHECKING:
    from tui_engineer.acp.session import AcpSession

log = logging.getLogger("tui_engineer.acp")

# A problem the user can fix (not a repository, no server...): the JSON-RPC error's message is
# the sentence the CLI prints. -32000 is ACP's "authentication required" (no key, a key refused).
USER_ERROR = -32001
AUTH_REQUIRED = -32000
SESSION_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]*")  # as new_session_id makes them
MODES = {
    "ask": "Ask: you review every step (its diff and test results) before it is committed",
    "auto": "Auto: a step whose tests pass is committed unasked; one that fails, or that no "
    "test verified, is still asked about",
}


@dataclass
class StartOptions:
    """What the `acp` command line says, for every session: the settings it gives (flags), and
    how to start on a dirty tree or without tests."""

    flags: dict[str, object] = field(default_factory=dict)
    allow_dirty: bool = False
    no_tests: str = ""


def load_engine() -> None:
    from tui_engineer.acp import history, session  # noqa: F401 - the engine, through them
    from tui_engineer.session.prepare import load_model_client

    load_model_client()


def reads_unstable(capabilities: Any, name: str) -> bool:
    """Whether the client said in `initialize` that it reads `name`, an update the stable schema
    lacks: `clientCapabilities._meta[name]` true, as the protocol has extensions advertised. A
    client on the stable schema rejects a variant it does not know, and may end the session."""
    meta = getattr(capabilities, "field_meta", None)
    return isinstance(meta, dict) and meta.get(name) is True


def user_error(err: UserError) -> RequestError:
    from tui_engineer.base.names import readable
    from tui_engineer.session.start import about_the_key

    code = AUTH_REQUIRED if about_the_key(err) else USER_ERROR
    data = {"kind": type(err).__name__, "exit_code": err.exit_code}
    return RequestError(code, readable(str(err)), data)


def modes(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=m, name=m.capitalize(), description=MODES[m]) for m in APPROVALS
        ],
    )


class EngineerAgent:
    def __init__(self, start: StartOptions) -> None:
        self.start = start
        self.sessions: dict[str, AcpSession] = {}
        self.conn: Any = None
        self._loading: asyncio.Future[None] | None = None
        self.reads_buffers = False  # the client offers fs/read_text_file (its unsaved buffers)
        self.reads_usage = False  # the client said it reads `usage_update` (docs/acp.md)
        self.terminals = False  # the client offers terminal/create: `!command` runs there

    async def _engine(self) -> None:
        """The engine loaded (in a thread, started at initialize). Everything that imports it
        waits for this first: two threads importing the same package at once can each see it
        half made."""
        if self._loading is None:
            self._loading = asyncio.ensure_future(asyncio.to_thread(load_engine))
        await asyncio.shield(self._loading)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
        **kwargs: Any,
    ) -> InitializeResponse:  # fmt: skip
        # The engine and the model client (GitPython, the openai SDK) load behind the answer,
        # while the client gets ready to ask for a session.
        if self._loading is None:
            self._loading = asyncio.ensure_future(asyncio.to_thread(load_engine))
        fs = getattr(client_capabilities, "fs", None)
        self.reads_buffers = bool(getattr(fs, "read_text_file", False))
        self.terminals = bool(getattr(client_capabilities, "terminal", False))
        self.reads_usage = reads_unstable(client_capabilities, "usage_update")
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(
                name="tui-engineer", title="tui-engineer", version=__version__
            ),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        return AuthenticateResponse()

    async def _prepare(
        self,
        cwd: str,
        request: str = "",
        session_id: str = "",
        resume: str | None = None,
        part_of: str = "",
        mcp_servers: Sequence[Any] | None = None,
    ) -> Any:
        """The start-up checks, in a thread, then the model server asked for its models: a
        UserError says what to do. `resume`: a recorded session to go on with; `part_of`: the
        editor's session a new run is a later request of."""
        from tui_engineer.session.start import start
        from tui_engineer.session.tool_servers import editor_servers

        servers, not_started = editor_servers(mcp_servers)
        options = RunOptions(
            request=request,
            repo=Path(cwd),
            flags=dict(self.start.flags),
            allow_dirty=self.start.allow_dirty,
            no_tests=self.start.no_tests,
            session_id=session_id,
            resume=resume,
            part_of=part_of,
            mcp_servers=servers,
        )
        prepared = await start(options)  # no one to ask: a problem is the editor's error
        prepared.notices += not_started
        return prepared

    async def new_session(
        self, cwd: str, mcp_servers: Sequence[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        await self._engine()
        from tui_engineer.session.run import new_session_id
        from tui_engineer.session.spare_ahead import start_spare_ahead

        session_id = new_session_id()
        try:
            prepared = await self._prepare(cwd, session_id=session_id, mcp_servers=mcp_servers)
        except UserError as err:
            raise user_error(err) from None
        start_spare_ahead(prepared)  # while the editor waits for the first prompt
        session = await self._open(session_id, cwd, prepared, mcp_servers)
        session.offer_commands()  # sent once this answer is (the client knows the id then)
        return NewSessionResponse(session_id=session_id, modes=modes(session.approval))

    async def _open(
        self, session_id: str, cwd: str, prepared: Any, mcp: Sequence[Any] | None = None
    ) -> AcpSession:
        from tui_engineer.acp.session import AcpSession
        from tui_engineer.session.run import new_session_id

        async def again(request: str, resume: str | None) -> Any:  # each later run checks afresh
            if resume:
                return await self._prepare(cwd, request, resume=resume, mcp_servers=mcp)
            # A new request: a run record of its own, found by session/load as part of this one.
            return await self._prepare(
                cwd, request, new_session_id(), part_of=session_id, mcp_servers=mcp
            )

        if (old := self.sessions.pop(session_id, None)) is not None:
            await old.close()  # loaded again: one engine per session
        approval = prepared.settings.approval
        session = AcpSession(session_id, self.conn, again, prepared, approval)
        session.reads_buffers = self.reads_buffers
        session.terminals, session.cwd = self.terminals, cwd  # `!command` (acp/shell.py)
        session.translator.reads_usage = self.reads_usage
        self.sessions[session_id] = session
        return session

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Sequence[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Tell the recorded session again (its run records: each request made in it), then go
        on with its last request at the next prompt: its plan and accepted steps kept, no new
        plan call. A finished one is told too; the next prompt then starts a new request."""
        await self._engine()
        from tui_engineer.acp.history import HistoryTranslator
        from tui_engineer.session.resume import NothingToResume, events_from_record

        if not SESSION_ID.fullmatch(session_id):  # a name, never a path to read
            raise RequestError(USER_ERROR, f"No recorded session {session_id!r} here.")
        try:
            parts = await asyncio.to_thread(_session_parts, cwd, session_id)
            last = parts[-1].stem
            try:
                prepared = await self._prepare(
                    cwd, session_id=last, resume=last, mcp_servers=mcp_servers
                )
            except NothingToResume:
                prepared = await self._prepare(cwd, mcp_servers=mcp_servers)
        except UserError as err:
            raise user_error(err) from None
        history = [e for path in parts for e in events_from_record(path)]
        session = await self._open(session_id, cwd, prepared, mcp_servers)
        session.approval = recorded_mode(history, session.approval)
        told = HistoryTranslator(prepared.root, reads_usage=self.reads_usage)
        updates = told.told(history)
        session.translator.go_on_from(told)  # the plan as it stood, tool call ids counted on
        await session.tell(updates)
        session.offer_commands()
        return LoadSessionResponse(modes=modes(session.approval))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """The sessions recorded in `cwd`'s repository (acp/listing.py), for session/load."""
        if cwd is None:  # the records live in each repository: nothing to list without one
            return ListSessionsResponse(sessions=[])
        await self._engine()
        from tui_engineer.acp.listing import recorded_sessions

        return ListSessionsResponse(sessions=await asyncio.to_thread(recorded_sessions, cwd))

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(
                USER_ERROR, f"No session {session_id} in this agent: start one with session/new."
            )
        return session

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in APPROVALS:
            raise RequestError.invalid_params(
                {"modeId": mode_id, "message": f"modes are {', '.join(APPROVALS)}"}
            )
        session.set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text = prompt_text(prompt)
        if not text.strip():
            raise RequestError.invalid_params({"message": "The prompt holds no text."})
        return PromptResponse(stop_reason=await session.prompt(text))  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await session.cancel()

    async def close(self) -> None:
        """The client is gone (stdin closed) or a signal came: every session stops cleanly."""
        sessions = [session.close() for session in self.sessions.values()]
        await asyncio.gather(*sessions, return_exceptions=True)  # side by side: see close()


def recorded_mode(history: Sequence[Any], approval: str) -> str:
    """The approval mode the recorded session was last switched to, else `approval`."""
    from tui_engineer.engine import events as ev

    changes = [e.approval for e in history if isinstance(e, ev.ApprovalChanged)]
    return changes[-1] if changes and changes[-1] in APPROVALS else approval


def prompt_text(blocks: Sequence[Any]) -> str:
    """The request as the model gets it: the text, and any file the user attached (embedded
    context) or linked."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResourceContentBlock):
            text = getattr(block.resource, "text", None)
            if text is not None and is_terminal_uri(block.resource.uri):
                parts.append(terminal_attachment(text))  # as the app's `y` sends it
            elif text is not None:
                parts.append(f"{block.resource.uri}:\n```\n{text}\n```")
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"(see {block.uri})")
    return "\n\n".join(parts)


def _session_parts(cwd: str, session_id: str) -> list[Path]:
    """The run records of editor session `session_id` (session/resume.py): NotARepo or
    NothingToResume, said as for session/new, when there are none."""
    from tui_engineer.session.repository import repo_root
    from tui_engineer.session.resume import session_parts

    return session_parts(repo_root(Path(cwd)), session_id)
