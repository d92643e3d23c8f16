"""The settings a session runs with, and where each one came from."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui_engineer.config.agents_md import AgentsFile
from tui_engineer.errors import UserError


class ConfigError(UserError):
    """A config file, environment variable or flag holds something unusable.

    The message names the origin (file, variable or flag), the key and what is expected.
    """


@dataclass(frozen=True)
class Settings:
    model: str = "gpt-4o-mini"
    base_url: str | None = None  # None → the SDK default (api.openai.com)
    api_key_env: str = "OPENAI_API_KEY"  # which env var holds the key
    api_key: str | None = None  # from the env var named by api_key_env, or the user config only
    test_command: str | None = None  # None after loading means "could not detect"
    test_timeout: float = 300.0  # seconds
    max_fix_attempts: int = 3
    sandbox: str = "local"  # "local" | "docker"
    max_tokens: int | None = None  # session token budget; None = unlimited
    max_usd: float | None = None
    max_wall_seconds: float | None = None
    record_runs: bool = True
    theme: str = "tui-engineer-dark"
    allow_network: bool = False  # tests may use the network (docker and local sandboxes)
    sandbox_template: str | None = None  # docker: python / node / rust / yours; None = pick
    full_tests_always: bool = False  # True: no affected-tests-first, the whole suite every attempt
    pipeline: bool = True  # prepare the next step while the human reviews this one
    # Steps the plan marks test_first write their test first: it must fail on the old code and
    # pass after the change (engine/test_first.py).
    test_first: bool = True
    # Affected tests first only once the full suite was seen taking this long (0: always): for a
    # quick suite the extra pytest start-ups cost more than they save.
    affected_after_seconds: float = 3.0
    # Run the suite on the starting commit (beside the plan): tests already failing there are
    # shown apart and not a step's to fix (verify/baseline.py).
    baseline: bool = True
    # The longest reply each kind of model call may give (sent as its max_completion_tokens):
    # no call is unbounded, and a budget check knows the worst case before the call is made.
    reply_tokens_plan: int = 2048
    reply_tokens_propose: int = 8192
    reply_tokens_diagnose: int = 1024
    reply_tokens_fix: int = 8192
    context_window: int | None = None  # tokens; None → ask the server, else 16,384
    context_budget: int | None = None  # tokens of file contents per prompt; None → 30,000
    show_rounds: int = 3  # SHOW rounds (the model asks to see more) before each edit reply
    show_lines: int = 400  # lines one SHOW answer may hold
    stream_idle_timeout: float = 60.0  # seconds with no byte from the server before giving up
    # Seconds a session without a human at the keys (headless) waits, paused with its plan, for
    # a model server that stopped answering mid-step; the TUI waits until you retry or quit.
    server_wait: float = 300.0
    # Extra variables the local sandbox passes to tests (names or PREFIX*, space/comma separated)
    # on top of the documented allow list; your own config only (a repository may not widen it).
    test_env: str | None = None
    # Paths git ignores that the tests need (generated code, a vendored folder), shown read-only
    # from your tree inside the sandbox, on top of the defaults per ecosystem (node_modules,
    # .venv, vendor): relative paths, separated by spaces or commas (sandbox/ignored.py).
    show_ignored: str | None = None
    # "ask": you review every step. "auto": a step whose tests pass is committed unasked; one
    # that fails, or that no test verified, is reviewed as in "ask" (engine/approval.py).
    # Yours to choose: a repository's config may set "ask" only.
    approval: str = "ask"
    # Files the model may not change (its edits to them are refused with the reason), such as
    # the tests of a benchmark exercise: relative paths, separated by spaces or commas.
    read_only: str | None = None


@dataclass
class LoadedSettings:
    settings: Settings
    sources: dict[str, str]  # key -> "default", "flag --model", "env TUI_ENGINEER_MODEL", a path…
    files_read: list[Path]
    # Where the user config is looked for (shown by format_settings even when it does not exist).
    user_config: Path | None = None
    # The repository's AGENTS.md (or CLAUDE.md, CONVENTIONS.md), when it has one.
    agents: AgentsFile | None = None
