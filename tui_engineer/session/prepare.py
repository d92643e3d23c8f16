"""Start-up checks for a session, in the order a user fixes them (the repository, its
settings, the test command, the sandbox, the key), and what passed them: `Prepared`, which
session/run.py's `run_prepared` runs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui_engineer.base.errors import UserError
from tui_engineer.base.sample_mark import is_sample_repo
from tui_engineer.config import LoadedSettings, Settings, load_settings
from tui_engineer.config.agents_md import AgentsFile
from tui_engineer.config.mcp_servers import McpServerConfig
from tui_engineer.engine.runtime import Model
from tui_engineer.sandbox.bwrap_program import Bwrap, require_bwrap
from tui_engineer.session.options import RunOptions
from tui_engineer.session.resume import Resumed, load_run
from tui_engineer.vcs.accept_recovery import recover_interrupted_accept
from tui_engineer.vcs.cleanup import running_session
from tui_engineer.vcs.dirty import DirtyTree
from tui_engineer.vcs.one_session import refuse_second_session
from tui_engineer.vcs.repo import (
    RepoState,
    detached_head_notice,
    find_repo_root,
    refuse_in_progress,
    repo_state,
)
from tui_engineer.verify.checks.declared import chosen, find_checks
from tui_engineer.verify.checks.found import Check

if TYPE_CHECKING:
    from tui_engineer.session.tool_servers import KeptTools

WRITE_TESTS_COMMAND = "python -m pytest"


class NoTestCommand(UserError):
    """No test command was found or set: the user picks how to go on (a UI offers the choices)."""


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
    from tui_engineer.llm import Budget, CallUsage, MissingApiKey, ModelClient, UsageLedger

    budget = Budget(
        max_tokens=settings.max_tokens,
        max_usd=settings.max_usd,
        max_wall_seconds=settings.max_wall_seconds,
    )
    ledger = UsageLedger()
    if resumed is not None:  # a resumed session's budget counts what it spent before
        ledger.add(CallUsage(*resumed.usage))
    try:
        return ModelClient.from_settings(settings, ledger=ledger, budget=budget)
    except MissingApiKey as err:
        raise _demo_way_on(err, options) from None


def _demo_way_on(err: UserError, options: RunOptions) -> UserError:
    """In a sample repo the demo kept, the way on is the demo's built-in model, not a key."""
    from tui_engineer.llm import MissingApiKey

    root = find_repo_root(options.repo)
    if not is_sample_repo(root):
        return err
    if options.resume is None:
        way = "`tui-engineer demo` runs the demo again, in a new sample repo, with its own model"
    else:
        way = f"`tui-engineer demo --resume {root}` goes on with its session, with its own model"
    return MissingApiKey(f"{err} This folder is a sample repo of the demo: {way}, no key needed.")


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
    # The MCP servers to start with it: the user config's, then the front end's (an editor's).
    mcp_servers: tuple[McpServerConfig, ...] = ()
    # Servers kept across an editor's requests (session/tool_servers.py KeptTools): started by
    # the first run, reused by the next, stopped with the editor's session. None: this run's own.
    kept_tools: KeptTools | None = None
    # The project's own checks run on each step (verify/checks/declared.py), as chosen.
    checks: list[Check] = field(default_factory=list)
    # The repository's first spare shadow being made while the human types (session/
    # spare_ahead.py): done when it is. None: no such spare is being made.
    spare_ahead: asyncio.Future[bool] | None = None


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


def refuse_running(root: Path, session_id: str) -> None:
    """Two processes going on with one session would interleave its record and its steps."""
    pid = running_session(root, session_id)
    if pid is not None:
        raise UserError(
            f"Session {session_id} is still running (process {pid} on this machine): stop it "
            "there (Ctrl-C, or quit) before resuming it here."
        )


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
        refuse_running(root, resumed.session_id)
        options.request = resumed.request
    refuse_second_session(root)  # told at the start, never refused later (vcs/one_session.py)
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
    notices += loaded.mcp_notices  # a repository's [mcp_servers], ignored
    checks, said = project_checks(root, settings)
    notices += said
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
        _mcp_servers(loaded.mcp_servers, options.mcp_servers),
        checks=checks,
    )


def _mcp_servers(
    user: tuple[McpServerConfig, ...], given: tuple[McpServerConfig, ...]
) -> tuple[McpServerConfig, ...]:
    """The user's servers and the front end's; one name given twice is started once (the
    front end's: an editor hands over the user's own list)."""
    named = {server.name: server for server in (*user, *given)}
    return tuple(named.values())


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


def project_checks(root: Path, settings: Settings) -> tuple[list[Check], list[str]]:
    """The checks the project declares, as the `project_checks` setting chooses them, and what
    to say once at the start: those declared whose tool is not installed, names not found."""
    if settings.project_checks.strip() == "none":
        return [], []
    found = find_checks(root)
    checks, unknown = chosen(found, settings.project_checks)
    if checks and settings.sandbox == "docker":
        # Their tools were found on this machine (the repository's .venv, PATH): not in the image.
        names = ", ".join(c.name for c in checks)
        return [], [f"The project's own checks ({names}) run with the local sandbox only: not "
                    "run in the docker sandbox."]  # fmt: skip
    return checks, [*found.missing, *unknown]
