"""One start-up for every front end: the checks (session/prepare.py), the model server asked
once, and each problem turned into a typed `Problem` whose fix (git init, saving uncommitted
work, going on without tests, trying again) is applied here. A front end only shows a problem
and says what the user chose: the TUI as a screen, the terminal as a question, an editor as an
error.

Another session on the repository (vcs/one_session.py) is a problem the user can answer by
taking it over: that session stops where it runs and goes on here from its record, shown as it
was, with no model call made again for what it already has."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.session.options import RunOptions
from tui_engineer.session.prepare import NoTestCommand, Prepared, prepare
from tui_engineer.vcs.dirty import DirtyTree, handle_dirty
from tui_engineer.vcs.one_session import LiveSession, SessionElsewhere, take_over
from tui_engineer.vcs.repo import NotARepo, find_repo_root, init_repo, repo_state

DEFAULT_URL = "https://api.openai.com/v1"

# What a user may answer to a problem, by its kind (None always means: give up).
CHOICES = {
    "not_a_repo": ("init",),
    "dirty": ("wip", "stash", "include"),
    "no_tests": ("write", "unverified", "retry"),
    "elsewhere": ("take_over", "retry"),
    "other": ("retry",),
}


@dataclass
class Problem:
    """Why a session cannot start yet, for a front end to show."""

    error: UserError
    kind: str  # a key of CHOICES
    title: str
    url: str | None = None  # the model server a key or server problem is about
    files: list[str] = field(default_factory=list)  # "dirty": the uncommitted files
    root: Path | None = None  # the repository it is about, where one was found
    other: LiveSession | None = None  # "elsewhere": the session another process runs

    @property
    def message(self) -> str:
        return str(self.error)


@dataclass(frozen=True)
class ServerCheck:
    """One quick look at the model server before the session starts, with a retry count of its
    own: a server that is down is said in a second or two, not after the session's backoff."""

    retries: int = 1
    timeout: float = 15.0


# A front end's answer to a problem: one of CHOICES[problem.kind], or None to give up.
Answer = Callable[[Problem], Awaitable[str | None]]
# Where start-up says what it is doing ("checking http://…"; "" when done).
Say = Callable[[str], None]
# Where it says what a fix did ("Created a git repository in …").
Said = Callable[[str], Awaitable[None]]


async def start(
    options: RunOptions,
    answer: Answer | None = None,
    *,
    server: ServerCheck | None = ServerCheck(),
    model: bool = True,
    init_first: bool = False,
    busy: Say | None = None,
    said: Said | None = None,
) -> Prepared:
    """The start-up checks until they pass: each problem goes to `answer`, its fix is applied
    and the checks run again. Raises the problem's UserError when there is no `answer` or the
    user gives up. `server`: the model server is asked before returning (None: the caller's
    first call asks it). `model` False leaves the model client to session/run.py (headless:
    made beside the shadow's creation)."""
    if init_first:
        await asyncio.to_thread(init_repo, options.repo)
    while True:
        try:
            prepared = await asyncio.to_thread(prepare, options, model=model)
            if server is not None and prepared.model is not None:
                await check_server(prepared, server, busy)
            await _reach_docker(prepared)
            return prepared
        except UserError as err:
            problem = await asyncio.to_thread(describe, options, err)
            choice = None if answer is None else await answer(problem)
            if choice is None:
                raise
            if busy is not None and problem.other is not None and choice == "take_over":
                busy(f"taking over: waiting for session {problem.other.session_id} to stop")
            try:
                sentence = await asyncio.to_thread(apply_choice, options, problem, choice)
            finally:
                if busy is not None and choice == "take_over":
                    busy("")
            if sentence and said is not None:
                await said(sentence)


def describe(options: RunOptions, err: UserError) -> Problem:
    """The problem `err` is, with what a front end shows beside it."""
    if isinstance(err, NotARepo):
        return Problem(err, "not_a_repo", "Not a git repository")
    if isinstance(err, DirtyTree):
        root = find_repo_root(options.repo)
        return Problem(
            err, "dirty", "Uncommitted changes", None, repo_state(root).changed_files, root
        )
    if isinstance(err, NoTestCommand):
        return Problem(err, "no_tests", "No test command")
    if isinstance(err, SessionElsewhere):
        root = find_repo_root(options.repo)
        return Problem(err, "elsewhere", problem_title(err), root=root, other=err.live)
    return Problem(err, "other", problem_title(err), server_url(options, err))


def apply_choice(options: RunOptions, problem: Problem, choice: str) -> str:
    """Do what the user chose for `problem`; return what was done, to be said ("" if nothing)."""
    if choice not in CHOICES[problem.kind]:
        raise ValueError(f"{choice!r} does not answer a {problem.kind!r} problem")
    if problem.kind == "not_a_repo":
        return f"Created a git repository in {init_repo(options.repo)}"
    if problem.kind == "dirty":
        if choice == "include":
            options.allow_dirty = True
        return handle_dirty(problem.root or find_repo_root(options.repo), choice)  # type: ignore[arg-type]
    if problem.kind == "no_tests" and choice != "retry":
        options.no_tests = choice
    if problem.kind == "elsewhere" and choice == "take_over":
        assert problem.other is not None
        root = problem.root or find_repo_root(options.repo)
        return take_over_session(options, root, problem.other)
    return ""


def take_over_session(options: RunOptions, root: Path, live: LiveSession) -> str:
    """Stop `live` where it runs and set `options` to go on with it here (its record read back
    by prepare, session/resume.py); a session with nothing left to go on with (done, or not
    recorded) leaves a new session here. Returns what was done, to be said."""
    from tui_engineer.session.resume import NothingToResume, load_run

    take_over(live)
    stopped = f"Took over session {live.session_id}: process {live.pid} stopped it there"
    try:
        load_run(root, live.session_id)
    except NothingToResume:
        return f"{stopped}; it had nothing left to go on with, so this is a new session."
    options.resume = live.session_id
    return f"{stopped} (its accepted steps stay committed) and it goes on here."


async def check_server(prepared: Prepared, check: ServerCheck, busy: Say | None = None) -> None:
    """Ask the server once, with `check`'s retries and timeout (not the session's). A problem
    closes the prepared model, which the next attempt makes again."""
    from tui_engineer.llm import ModelClient

    if getattr(prepared.model, "check_connection", None) is None:
        return  # a replayed run needs no server
    s = prepared.settings
    checker = ModelClient(
        model=s.model,
        base_url=s.base_url,
        api_key=s.api_key,
        api_key_env=s.api_key_env,
        max_retries=check.retries,
        timeout=check.timeout,
    )
    if busy is not None:
        busy(f"checking {checker.base_url}")
    try:
        await checker.check_connection()
    except UserError:
        assert prepared.model is not None
        await prepared.model.aclose()
        raise
    finally:
        await checker.aclose()
        if busy is not None:
            busy("")


async def _reach_docker(prepared: Prepared) -> None:
    """The docker sandbox is reached lazily by a session: ask the engine now, so a stopped
    daemon is a start-up problem with its fix, not a failure at the first test run."""
    if prepared.settings.sandbox != "docker":
        return
    from tui_engineer.sandbox.docker.client import connect

    try:
        await asyncio.to_thread(lambda: connect().close())
    except UserError:
        if prepared.model is not None:
            await prepared.model.aclose()
        raise


def about_the_key(err: UserError) -> bool:
    """A missing or rejected API key: an editor offers its own way to give one."""
    from tui_engineer.llm.errors import AuthRejected, MissingApiKey

    return isinstance(err, MissingApiKey | AuthRejected)


def problem_title(err: UserError) -> str:
    from tui_engineer.config import ConfigError
    from tui_engineer.llm.errors import AuthRejected, MissingApiKey, ServerUnreachable, UnknownModel
    from tui_engineer.sandbox.bwrap_program import SandboxUnavailable
    from tui_engineer.vcs import GitRefused

    titles: list[tuple[type[UserError], str]] = [
        (ConfigError, "Configuration problem"),
        (MissingApiKey, "No API key"),
        (ServerUnreachable, "Model server unreachable"),
        (AuthRejected, "API key rejected"),
        (UnknownModel, "Unknown model"),
        (GitRefused, "Git is in the middle of something"),
        (SandboxUnavailable, "No sandbox for the tests"),
        (SessionElsewhere, "Another session works on this repository"),
    ]
    for kind, title in titles:
        if isinstance(err, kind):
            return title
    if "test command" in str(err):
        return "No test command"
    return "Cannot start"


def server_url(options: RunOptions, err: UserError) -> str | None:
    """The model server URL a key or server problem is about (None for other problems)."""
    from tui_engineer.config import load_settings
    from tui_engineer.llm.errors import LLMError

    if not isinstance(err, LLMError):
        return None
    try:
        settings = load_settings(find_repo_root(options.repo), options.flags).settings
    except UserError:
        return None
    return (settings.base_url or DEFAULT_URL).rstrip("/")
