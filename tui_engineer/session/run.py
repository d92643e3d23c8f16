"""Wire the engine's parts together for one headless session and run it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.config import LoadedSettings, Settings, load_settings
from tui_engineer.config.agents_md import AgentsFile
from tui_engineer.engine import events as ev
from tui_engineer.engine import prompts
from tui_engineer.engine.cleanup import to_the_end
from tui_engineer.engine.events import EventSink
from tui_engineer.engine.review import Reviewer
from tui_engineer.engine.runtime import EngineOptions, Model, Runtime
from tui_engineer.engine.session import Session, SessionResult
from tui_engineer.errors import UserError
from tui_engineer.records.recorder import Recorder
from tui_engineer.sandbox.base import Sandbox
from tui_engineer.sandbox.bwrap_program import Bwrap, require_bwrap
from tui_engineer.sandbox.factory import make_sandbox
from tui_engineer.sandbox.local import LocalSandbox
from tui_engineer.session.options import RunOptions
from tui_engineer.session.resume import Resumed, load_run, restore, where_to_go_on
from tui_engineer.vcs.accept_journal import recover_interrupted_accept
from tui_engineer.vcs.cleanup import cleanup_leftovers
from tui_engineer.vcs.repo import (
    DirtyTree,
    RepoState,
    detached_head_notice,
    find_repo_root,
    refuse_in_progress,
    repo_state,
)
from tui_engineer.vcs.shadow import Shadow, empty_submodules_notice
from tui_engineer.verify.narrowing import known_runner
from tui_engineer.verify.report import is_pytest_command
from tui_engineer.verify.selection import TestSelection

WRITE_TESTS_COMMAND = "python -m pytest"
UNVERIFIED = "unverified: no tests ran"


class NoTestCommand(UserError):
    """No test command was found or set: the user picks how to go on (a UI offers the choices)."""


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


def require_test_command(root: Path, settings: Settings, no_tests: str = "") -> str:
    """load_settings already auto-detected; None here means nothing was found: with `no_tests`
    "write" the first step writes the tests (run with pytest), "unverified" runs none (""
    returned), else NoTestCommand. A local test command whose program does not exist is
    refused now, not after the first model call."""
    command = settings.test_command
    if no_tests == "unverified":
        return ""
    if command is None and no_tests == "write":
        command = WRITE_TESTS_COMMAND
    if command is None:
        raise NoTestCommand(
            "No test command: this repo has no tests tui-engineer can find. Pass --test-cmd "
            "'your command' or set test_command in .tui-engineer.toml; or --write-tests (the "
            f"first step writes tests, run with `{WRITE_TESTS_COMMAND}`), or --unverified "
            "(no tests run; every step is marked unverified)."
        )
    if settings.sandbox == "local":
        from tui_engineer.sandbox.local import missing_program

        program = missing_program(command, os.environ, root)
        if program is not None:
            raise UserError(
                f"The test command `{command}` cannot run here: `{program}` was not found. "
                "Pass --test-cmd or set test_command in .tui-engineer.toml."
            )
    return command


def check_repo(root: Path, allow_dirty: bool, state: RepoState | None = None) -> bool:
    """Refuse states a session cannot start from; return whether to include dirty changes.
    `state`: the repository's state if the caller just read it."""
    state = state or repo_state(root)
    refuse_in_progress(state, "start a session")
    if state.dirty and not allow_dirty:
        raise DirtyTree.for_files(root, state.changed_files)
    return state.dirty


def make_model(options: RunOptions, settings: Settings, resumed: Resumed | None = None) -> Model:
    if options.replay is not None:
        from tui_engineer.records import ReplayModel

        return ReplayModel(options.replay)
    from tui_engineer.llm import Budget, CallUsage, ModelClient, UsageLedger

    budget = Budget(
        max_tokens=settings.max_tokens,
        max_usd=settings.max_usd,
        max_wall_seconds=settings.max_wall_seconds,
    )
    ledger = UsageLedger()
    if resumed is not None:  # a resumed session's budget counts what it spent before
        ledger.add(CallUsage(*resumed.usage))
    return ModelClient.from_settings(settings, ledger=ledger, budget=budget)


def _cleanup(root: Path, settings: Settings) -> list[str]:
    """Leftovers of crashed sessions: worktrees, and containers when docker is in use."""
    sentences = cleanup_leftovers(root)
    if settings.sandbox == "docker":
        from tui_engineer.sandbox.docker import cleanup_containers

        sentences += cleanup_containers()
    return sentences


@dataclass
class Prepared:
    """A session that passed every start-up check: repo, settings, test command, API key."""

    options: RunOptions
    root: Path
    settings: Settings
    test_command: str
    include_dirty: bool
    # None: made (and checked against the server) by run_prepared, beside the shadow's creation.
    model: Model | None
    notices: list[str] = field(default_factory=list)  # said when the session starts
    bwrap: Bwrap | None = None  # the local sandbox's bubblewrap, checked at start-up
    agents: AgentsFile | None = None  # the repository's AGENTS.md (CLAUDE.md, CONVENTIONS.md)
    resumed: Resumed | None = None  # a recorded session to go on with (options.resume)
    head: str = ""  # the commit it starts on (HEAD at the checks)


def load_model_client() -> None:
    """Import the model client: the openai SDK is most of a headless start-up's CPU (~0.6 s of
    ~1.2 s on an idle core). A thread runs it while the start-up checks and the shadow's
    creation, mostly git processes, run beside it; `make_model` then finds it loaded."""
    from tui_engineer.llm import client  # noqa: F401

    with contextlib.suppress(ImportError):  # what the SDK itself loads on the first chat call
        import openai.resources.chat  # noqa: F401


def start_loading_model_client() -> None:
    """`load_model_client` in a daemon thread: an error exit does not wait for it to finish."""
    threading.Thread(target=load_model_client, name="load-model-client", daemon=True).start()


def prepare(options: RunOptions, *, model: bool = True) -> Prepared:
    """Start-up checks, in the order a user fixes them. Raises the UserError to show:
    NotARepo, ConfigError, no test command, GitRefused (merge in progress), DirtyTree,
    SandboxUnavailable, MissingApiKey. Synchronous: a UI runs it in a worker thread. With
    `model` False the model client is left to run_prepared (MissingApiKey then comes from
    there)."""
    root = find_repo_root(options.repo)
    # Before the dirty check: an accept cut off after its commit left files to write.
    recovered = recover_interrupted_accept(root)
    # Before any other check: a session with nothing to resume is said first.
    resumed = None if options.resume is None else load_run(root, options.resume or None)
    if resumed is not None:
        options.request = resumed.request
    loaded = load_settings(root, options.flags)
    settings = loaded.settings
    test_command = require_test_command(root, settings, options.no_tests)
    state = repo_state(root)  # read once: the checks and the detached-HEAD notice share it
    include_dirty = check_repo(root, options.allow_dirty, state)
    # Before any model call: a host where bwrap cannot make namespaces is a start-up problem.
    bwrap = require_bwrap() if settings.sandbox == "local" else None
    made = make_model(options, settings, resumed) if model else None
    notices = [n for n in (recovered, detached_head_notice(root, state)) if n]
    notices += agents_notices(loaded)
    return Prepared(
        options,
        root,
        settings,
        test_command,
        include_dirty,
        made,
        notices,
        bwrap,
        loaded.agents,
        resumed,
        state.head or "",
    )


def agents_notices(loaded: LoadedSettings) -> list[str]:
    """Said at the start: the model follows the repository's AGENTS.md (cut, if it was), and
    the test command came from it when it did."""
    agents = loaded.agents
    if agents is None:
        return []
    said = [f"Following {agents.name}: its conventions are in the model's instructions"]
    if agents.cut:
        said.append(agents.cut_notice())
    source = loaded.sources.get("test_command", "")
    if source == f"from {agents.name}":
        said.append(f"Test command `{loaded.settings.test_command}` ({source})")
    return said


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
    settings = prepared.settings
    # Asked to write tests when none were found: the first step does it, test-first.
    write_tests = prepared.options.no_tests == "write" and prepared.settings.test_command is None
    return EngineOptions(
        test_command=prepared.test_command,
        unverified=not prepared.test_command,
        write_tests=write_tests,
        test_timeout=settings.test_timeout,
        max_fix_attempts=settings.max_fix_attempts,
        plan=prepared.options.plan,
        diagnose=prepared.options.diagnose,
        max_tokens=settings.max_tokens,
        max_usd=settings.max_usd,
        full_tests_always=settings.full_tests_always,
        pipeline=settings.pipeline,
        test_first=settings.test_first or write_tests,
        reply_tokens={
            kind: getattr(settings, f"reply_tokens_{kind}")
            for kind in ("plan", "propose", "diagnose", "fix")
        },
        context_budget=settings.context_budget,
        show_rounds=settings.show_rounds,
        show_lines=settings.show_lines,
        server_wait=settings.server_wait,
        approval=settings.approval,
        read_only=tuple(p.strip("/") for p in (settings.read_only or "").replace(",", " ").split()),
        # No tests yet (the first step writes them): nothing to compare with.
        baseline=settings.baseline and not write_tests,
        conventions=_conventions(prepared.agents),
    )


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
    return (
        f"`{command}` cannot be narrowed to the tests a change affects: every attempt runs it "
        "whole (cargo test, jest, go test and node --test can be; see docs/configuration.md)."
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
    try:
        sandbox = make_sandbox(prepared.settings, prepared.root, session_id)
        for sentence in prepared.notices:
            emit(ev.Notice(message=sentence))
        for sentence in await asyncio.to_thread(_cleanup, prepared.root, prepared.settings):
            emit(ev.Notice(message=sentence))
        shadow = await to_the_end(
            asyncio.to_thread(
                Shadow.create,
                prepared.root,
                session_id=session_id,
                include_dirty=prepared.include_dirty,
            ),
            keep=made.append,  # a quit meanwhile still removes it
        )
        if making is not None:
            model = await making
        else:
            assert prepared.model is not None
            model = prepared.model
        if notice := empty_submodules_notice(shadow.empty_submodules):
            emit(ev.Notice(message=notice))
        runtime = Runtime(prepared.root, shadow, model, sandbox, _engine_options(prepared), emit)
        runtime.selection = _selection(prepared, sandbox)
        if notice := _whole_runs_notice(prepared, runtime.selection):
            emit(ev.Notice(message=notice))
        if inbox is not None:
            runtime.inbox = inbox
        session = Session(runtime, reviewer, session_id=session_id)
        await _starting_point(session, prepared, runtime.inbox)
        if on_session is not None:
            on_session(session)  # a UI keeps it for undo, test runs and chat
        await runtime.prewarm_tests()  # the first run starts up while the model is asked
        return await session.run(prepared.options.request)
    finally:
        # To its end even when more stop requests cancel it meanwhile: a shadow left here
        # would only go at the next start.
        await to_the_end(_close_session(prepared, making, sandbox, made, recorder))


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
    start_loading_model_client()
    prepared = await asyncio.to_thread(prepare, options, model=False)
    return await run_prepared(prepared, reviewer, sink, inbox)


async def _starting_point(
    session: Session, prepared: Prepared, inbox: asyncio.Queue[str]
) -> None:
    """The commit the session starts on; a resumed one's recorded state (session/resume.py)."""
    resumed = prepared.resumed
    session.head = prepared.head
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
