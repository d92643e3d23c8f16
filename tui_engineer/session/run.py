"""Wire the engine's parts together for one prepared session (session/prepare.py) and run it."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from tui_engineer.base import start_collection
from tui_engineer.config import Settings
from tui_engineer.config.agents_md import AgentsFile
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.cleanup import to_the_end
from tui_engineer.engine.events import EventSink
from tui_engineer.engine.options import EngineOptions
from tui_engineer.engine.reviews.review import Reviewer
from tui_engineer.engine.runtime import Model, Runtime
from tui_engineer.engine.session import Session, SessionResult
from tui_engineer.records.recorder import Recorder
from tui_engineer.sandbox.base import Sandbox
from tui_engineer.sandbox.factory import make_sandbox
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.session.options import RunOptions
from tui_engineer.session.prepare import Prepared, make_model, start_loading_model_client
from tui_engineer.session.resume_match import restore, where_to_go_on
from tui_engineer.session.spare_ahead import spares_kept
from tui_engineer.session.tool_servers import (
    close_session_tools,
    session_tools,
    start_session_tools,
)
from tui_engineer.vcs.cleanup import cleanup_leftovers
from tui_engineer.vcs.one_session import make_shadow_alone
from tui_engineer.vcs.shadow import Shadow
from tui_engineer.vcs.spare import pool_for
from tui_engineer.vcs.spare_prune import prune_in_background
from tui_engineer.vcs.submodules import empty_submodules_notice
from tui_engineer.verify.runners import known_runner, narrowable
from tui_engineer.verify.runners.pytest import is_pytest_command
from tui_engineer.verify.selection import TestSelection


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def _cleanup(root: Path, settings: Settings) -> list[str]:
    """Leftovers of crashed sessions: worktrees, and containers when docker is in use."""
    sentences = cleanup_leftovers(root)
    if settings.sandbox == "docker":
        from tui_engineer.sandbox.docker import cleanup_containers

        sentences += cleanup_containers()
    return sentences


def _sinks(
    prepared: Prepared, session_id: str, sink: EventSink
) -> tuple[EventSink, Recorder | None]:
    if not (prepared.options.record and prepared.settings.record_runs):
        return sink, None
    recorder = Recorder(prepared.root, session_id, secrets=[prepared.settings.api_key])

    def emit(event: ev.Event) -> None:
        # Recorded before it is shown: whatever a user (or a script reading --json) saw is in
        # the record when a kill -9 comes next, so a resume knows it.
        recorder(event)
        sink(event)

    return emit, recorder


def _engine_options(prepared: Prepared) -> EngineOptions:
    """The engine's options: each setting the engine has an option of the same name for is
    passed as it is (config/settings.py declares it); the rest are worked out here."""
    settings = prepared.settings
    # Asked to write tests when none were found: the first step does it, test-first.
    write_tests = prepared.options.no_tests == "write" and prepared.settings.test_command is None
    worked_out: dict[str, object] = {
        "test_command": prepared.test_command,
        "unverified": not prepared.test_command,
        "write_tests": write_tests,
        "plan": prepared.options.plan,
        "diagnose": prepared.options.diagnose,
        "test_first": settings.test_first or write_tests,
        "reply_tokens": {
            kind: getattr(settings, f"reply_tokens_{kind}")
            for kind in ("plan", "propose", "diagnose", "fix")
        },
        "read_only": tuple(
            p.strip("/") for p in (settings.read_only or "").replace(",", " ").split()
        ),
        # No tests yet (the first step writes them): nothing to compare with.
        "baseline": settings.baseline and not write_tests,
        "conventions": _conventions(prepared.agents),
        "declared_checks": tuple(prepared.checks),
    }
    same = {f.name for f in dataclasses.fields(EngineOptions)} & set(vars(settings))
    passed = {name: getattr(settings, name) for name in same - set(worked_out)}
    return EngineOptions(**passed, **worked_out)  # type: ignore[arg-type]


def _conventions(agents: AgentsFile | None) -> str:
    return prompts.conventions_block(agents.name, agents.conventions) if agents else ""


def _selection(prepared: Prepared, sandbox: Sandbox) -> TestSelection | None:
    """Affected tests first unless switched off. Coverage data (testmon) is kept in the user
    cache, which only the local sandbox can write; docker picks tests by name and imports."""
    if prepared.settings.full_tests_always or not prepared.test_command:
        return None
    selection = TestSelection.for_repo(prepared.root, prepared.test_command)
    if selection is not None:
        selection.min_full_seconds = prepared.settings.affected_after_seconds
    if selection is not None and sandbox.name != "local":
        selection.testmon = False
    if selection is not None and isinstance(sandbox, LocalSandbox):
        sandbox.allow_writes(selection.home)  # under bubblewrap all else is read-only
    return selection


def _whole_runs_notice(prepared: Prepared, selection: TestSelection | None) -> str | None:
    """Said once: a runner whose tests cannot be narrowed to those a change affects."""
    command = prepared.test_command
    if selection is not None or prepared.settings.full_tests_always or not command:
        return None
    if is_pytest_command(command) or not known_runner(command):
        return None
    names = narrowable()
    return (
        f"`{command}` cannot be narrowed to the tests a change affects: every attempt runs it "
        f"whole ({', '.join(names[:-1])} and {names[-1]} can be; see docs/configuration.md)."
    )


async def run_prepared(
    prepared: Prepared,
    reviewer: Reviewer,
    sink: EventSink,
    inbox: asyncio.Queue[str] | None = None,
    on_session: Callable[[Session], None] | None = None,
) -> SessionResult:
    """Run a prepared session. Chat messages put into `inbox` reach the model with its next call.
    Leftovers of crashed sessions are cleaned first; this session's own are removed at the end."""
    resumed = prepared.resumed
    session_id = resumed.session_id if resumed else prepared.options.session_id or new_session_id()
    emit, recorder = _sinks(prepared, session_id, sink)
    # Without a model yet (run_session), it is made and checked while git makes the shadow.
    making = asyncio.ensure_future(_make_and_check(prepared)) if prepared.model is None else None
    made: list[Shadow] = []
    sandbox: Sandbox | None = None
    kept = prepared.kept_tools  # an editor's session keeps them across its requests
    # Beside the shadow's creation.
    servers = (prepared.mcp_servers, prepared.root, prepared.settings)
    spares = spares_kept(prepared.settings)
    tools = kept.start(*servers) if kept is not None else start_session_tools(*servers)
    try:
        sandbox = make_sandbox(prepared.settings, prepared.root, session_id)
        for sentence in prepared.notices:
            emit(ev.Notice(message=sentence))
        for sentence in await asyncio.to_thread(_cleanup, prepared.root, prepared.settings):
            emit(ev.Notice(message=sentence))
        # Another session started since this one's start-up checks (a TUI waits for its
        # request, or two started in the same second): said now, before any model call.
        making_shadow = time.monotonic()
        if prepared.spare_ahead is not None:  # its checkout, not a second one beside it
            await asyncio.wait({prepared.spare_ahead})
        shadow = await to_the_end(
            asyncio.to_thread(
                make_shadow_alone, prepared.root, session_id, prepared.include_dirty, spares
            ),
            keep=made.append,  # a quit meanwhile still removes it
        )
        made_in = round(time.monotonic() - making_shadow, 3)
        # The spares no session would take: off the way to the model.
        prune_in_background(spares, own=pool_for(shadow.path.parent))
        if making is not None:
            model = await making
        else:
            assert prepared.model is not None
            model = prepared.model
        start_collection.release()  # the start's imports are all done (base/start_collection.py)
        if notice := empty_submodules_notice(shadow.empty_submodules):
            emit(ev.Notice(message=notice))
        runtime = Runtime(prepared.root, shadow, model, sandbox, _engine_options(prepared), emit)
        runtime.tools = await session_tools(tools, emit, say=kept is None or not kept.said)
        if kept is not None:
            kept.said = True
        runtime.selection = _selection(prepared, sandbox)
        if notice := _whole_runs_notice(prepared, runtime.selection):
            emit(ev.Notice(message=notice))
        if inbox is not None:
            runtime.inbox = inbox
        session = Session(runtime, reviewer, session_id=session_id)
        session.say_after_start(ev.ShadowReady(seconds=made_in, from_spare=shadow.from_spare))
        await _starting_point(session, prepared, runtime.inbox)
        if on_session is not None:
            on_session(session)  # a UI keeps it for undo, test runs and chat
        await runtime.prewarm_tests()  # the first run starts up while the model is asked
        return await session.run(prepared.options.request)
    finally:
        # To its end even when more stop requests cancel it meanwhile: a shadow left here
        # would only go at the next start.
        await to_the_end(_close_session(prepared, making, sandbox, made, recorder))
        if kept is None:
            await to_the_end(close_session_tools(tools))


async def _close_session(
    prepared: Prepared,
    making: asyncio.Future[Model] | None,
    sandbox: Sandbox | None,
    made: list[Shadow],
    recorder: Recorder | None,
) -> None:
    if making is not None:
        if not making.done():  # the sandbox or the shadow failed first (or the user quit)
            making.cancel()
        await asyncio.wait([making])
        if not making.cancelled() and making.exception() is None:
            prepared.model = making.result()
    if sandbox is not None:
        await sandbox.close()
    if prepared.model is not None:
        await prepared.model.aclose()
    for shadow in made:
        await asyncio.to_thread(shadow.remove)
        await asyncio.to_thread(prune_empty_folder, shadow.path.parent)
    if recorder is not None:
        recorder.close()


async def run_session(
    options: RunOptions,
    reviewer: Reviewer,
    sink: EventSink,
    inbox: asyncio.Queue[str] | None = None,
) -> SessionResult:
    """Prepare and run one session (the headless command's whole job). The model client (the
    openai SDK) loads in a thread from the start, beside the start-up checks and the shadow's
    creation; it is checked against the server before the session's first call."""
    from tui_engineer.session.start import start

    start_loading_model_client()
    # No one to ask here: a start-up problem is raised for the caller to show.
    prepared = await start(options, server=None, model=False)
    return await run_prepared(prepared, reviewer, sink, inbox)


async def _starting_point(session: Session, prepared: Prepared, inbox: asyncio.Queue[str]) -> None:
    """The commit the session starts on; a resumed one's recorded state (session/resume.py)."""
    resumed = prepared.resumed
    session.head = prepared.head
    session.part_of = prepared.options.part_of or (resumed.part_of if resumed else "")
    if resumed is None:
        return
    going = await asyncio.to_thread(where_to_go_on, prepared.root, resumed, prepared.head)
    restore(session, resumed, going)
    for text in resumed.queued:  # chat sent before the stop, never delivered
        inbox.put_nowait(text)


async def _make_and_check(prepared: Prepared) -> Model:
    model = await asyncio.to_thread(
        make_model, prepared.options, prepared.settings, prepared.resumed
    )
    await check_model(model)
    return model


async def check_model(model: Model) -> None:
    """Refuse a model the server does not serve before any paid call: the same check (the
    client's check_connection, llm/models.py's rule) the TUI makes at start-up."""
    check = getattr(model, "check_connection", None)
    if check is None:
        return  # a replayed run needs no server
    try:
        await check()
    except BaseException:
        await model.aclose()
        raise


def prune_empty_folder(folder: Path) -> None:
    """The per-repo cache folder goes with its last shadow: no empty folder per repo ever used."""
    with contextlib.suppress(OSError):  # not empty: another session of this repo is running
        folder.rmdir()
