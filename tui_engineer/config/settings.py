"""The settings a session runs with, each declared once (`Settings`): its type, default, what it
accepts, its flag, how `tui-engineer config` shows it, and whether a repository's config may set
it. The parser (cli/arguments.py), the config layers, `config`, doctor and the engine's options are
derived from these declarations: adding a setting is one declaration and the code using it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_engineer.base.errors import UserError
from tui_engineer.config import checks
from tui_engineer.config.agents_md import AgentsFile
from tui_engineer.config.mcp_servers import McpServerConfig


class ConfigError(UserError):
    """A config file, environment variable or flag holds something unusable.

    The message names the origin (file, variable or flag), the key and what is expected.
    """


@dataclass(frozen=True)
class Yours:
    """A setting a repository's config may not set (a cloned repository must not widen what its
    tests may do, or choose where your key goes): `why`, said in the refusal; `values`: only
    these values are refused (empty: any); `how`: where to set it instead, when not the usual
    flag, variable or user config."""

    why: str
    values: tuple[object, ...] = ()
    how: str = ""


@dataclass(frozen=True)
class Flag:
    """The command-line flag that sets a setting: `--name VALUE`, or for a switch the value
    it stands for (`const`); `scale` turns the flag's unit into the setting's (minutes→s)."""

    name: str
    help: str
    const: object = None
    choices: tuple[str, ...] = ()
    scale: float = 1.0


def setting(
    default: Any,
    expected: str,
    check: Callable[[Any], bool] = checks.anything,
    *,
    flag: Flag | None = None,
    yours: Yours | None = None,
    unit: str = "",
    when_none: str = "",
) -> Any:
    """One setting's declaration: `expected` completes "<key> must be …"; `unit` and `when_none`
    are how `tui-engineer config` shows its value and its absence."""
    about = {"expected": expected, "check": check, "flag": flag, "yours": yours}
    return field(default=default, metadata={**about, "unit": unit, "when_none": when_none})


UNLIMITED = ", or 'none' for unlimited"
SWITCH = "true or false"
_KEY_ROUTE = (
    "it decides where your API key is sent, and a repository you cloned should not choose that"
)


@dataclass(frozen=True)
class Settings:
    model: str = setting(
        "gpt-4o-mini",
        "a non-empty model name such as 'gpt-4o-mini'",
        checks.non_empty,
        flag=Flag("--model", "model name (e.g. gpt-4o-mini)"),
    )
    base_url: str | None = setting(  # None → the SDK default (api.openai.com)
        None,
        "an http:// or https:// URL such as 'http://localhost:8000/v1', or 'none' for the SDK "
        "default",
        checks.is_url,
        flag=Flag("--base-url", "OpenAI-compatible server URL"),
        yours=Yours(_KEY_ROUTE, how="OPENAI_BASE_URL or --base-url"),
        when_none="SDK default (https://api.openai.com/v1)",
    )
    api_key_env: str = setting(  # which env var holds the key
        "OPENAI_API_KEY",
        "the name of an environment variable, such as 'OPENAI_API_KEY'",
        checks.env_name,
        yours=Yours(_KEY_ROUTE, how="TUI_ENGINEER_API_KEY_ENV"),
    )
    api_key: str | None = setting(  # from the env var named by api_key_env, or the user config
        None,
        "a non-empty string",
        checks.non_empty,
        yours=Yours(
            "it would be committed with the code",
            how="export the key in OPENAI_API_KEY (or the variable named by api_key_env) or put "
            "api_key in",
        ),
    )
    test_command: str | None = setting(  # None after loading means "could not detect"
        None,
        "a non-empty command such as 'python -m pytest -x'",
        checks.non_empty,
        flag=Flag("--test-cmd", "command that runs the tests"),
        when_none="not detected — set test_command in .tui-engineer.toml or pass --test-cmd",
    )
    test_timeout: float = setting(
        300.0,
        "a number of seconds > 0",
        checks.positive,
        flag=Flag("--test-timeout", "seconds before a test run is killed"),
        unit="s",
    )
    max_fix_attempts: int = setting(
        3,
        "a whole number ≥ 0",
        checks.not_negative,
        flag=Flag("--max-fix-attempts", "fix attempts per step (default 3)"),
    )
    sandbox: str = setting(
        "local",
        "one of 'local', 'docker', 'none'",
        checks.one_of(*checks.SANDBOXES),
        flag=Flag(
            "--sandbox",
            "where tests run: local (bubblewrap), docker, or none (uncontained)",
            choices=checks.SANDBOXES,
        ),
        yours=Yours("it would run the repository's tests uncontained on your machine", ("none",)),
    )
    max_tokens: int | None = setting(  # the session's token budget
        None,
        "a whole number > 0" + UNLIMITED,
        checks.positive,
        flag=Flag("--max-tokens", "token budget for the session"),
        unit="tokens",
        when_none="unlimited",
    )
    max_usd: float | None = setting(
        None,
        "a number of US dollars > 0" + UNLIMITED,
        checks.positive,
        flag=Flag("--max-usd", "money budget for the session (USD)"),
        unit="USD",
        when_none="unlimited",
    )
    max_wall_seconds: float | None = setting(
        None,
        "a number of seconds > 0" + UNLIMITED,
        checks.positive,
        flag=Flag("--max-minutes", "wall-clock budget for the session", scale=60.0),
        unit="s",
        when_none="unlimited",
    )
    record_runs: bool = setting(True, SWITCH)
    theme: str = setting("tui-engineer-dark", "a non-empty theme name", checks.non_empty)
    allow_network: bool = setting(  # tests may use the network (docker and local sandboxes)
        False,
        SWITCH,
        flag=Flag(
            "--allow-network",
            "let the tests reach the network (only you can allow it, never a repo's config)",
            const=True,
        ),
        yours=Yours(
            "it would let the repository's tests reach the network (and servers on this "
            "machine) without your say",
            (True,),
        ),
    )
    sandbox_template: str | None = setting(  # docker: python / node / rust / yours; None = pick
        None, "a template name such as 'python', or 'none' to pick", checks.non_empty
    )
    full_tests_always: bool = setting(  # no affected-tests-first: the whole suite every attempt
        False,
        SWITCH,
        flag=Flag(
            "--full-tests-always",
            "run the whole test suite on every attempt (default: affected tests first)",
            const=True,
        ),
    )
    commit_hook_check: bool = setting(  # the user's pre-commit hook run on each step before review
        True,
        SWITCH,
        flag=Flag(
            "--no-commit-hook-check",
            "do not run your pre-commit hook on each step before review (the accept still does)",
            False,
        ),
    )
    # The project's own linters, type checkers and formatters run on each step (found from
    # what it declares: verify/checks/declared.py): 'auto' all found, 'none', or their ids.
    project_checks: str = setting(
        "auto",
        "'auto' (every check the project declares), 'none', or check names such as 'ruff,mypy'",
        checks.non_empty,
        flag=Flag(
            "--checks",
            "the project's own checks run on each step: auto (all it declares), none, or "
            "names such as ruff,mypy",
        ),
    )
    # Each declared check's own time limit: one that hangs is said and not judged.
    check_timeout: float = setting(120.0, "a number of seconds > 0", checks.positive, unit="s")
    pipeline: bool = setting(  # prepare the next step while the human reviews this one
        True,
        SWITCH,
        flag=Flag("--no-pipeline", "do not prepare the next step while you review one", False),
    )
    # How many later steps may be prepared at once while one is reviewed (each in its own
    # shadow, with its own fix loop): those whose dependencies are in (engine/ahead/pipeline.py).
    parallel_steps: int = setting(
        3, "a whole number ≥ 1 (1: only the next step)", checks.at_least(1)
    )
    # Steps the plan marks test_first write their test first: it must fail on the old code and
    # pass after the change (engine/steps/test_first.py).
    test_first: bool = setting(
        True,
        SWITCH,
        flag=Flag(
            "--no-test-first",
            "do not make steps that add behaviour write a failing test first",
            const=False,
        ),
    )
    # Affected tests first only once the full suite was seen taking this long (0: always): for a
    # quick suite the extra pytest start-ups cost more than they save.
    affected_after_seconds: float = setting(3.0, "a number of seconds ≥ 0", checks.not_negative)
    # Run the suite on the starting commit (beside the plan): tests already failing there are
    # shown apart and not a step's to fix (verify/baseline.py).
    baseline: bool = setting(True, SWITCH)
    # A fix request ("fix add", "make the failing tests pass") asks the model only once that run
    # lists what fails, but waits this long at most: on a suite of minutes it goes on without the
    # list (engine/steps/old_failures.py).
    fix_list_wait: float = setting(30.0, "a number of seconds ≥ 0", checks.not_negative, unit="s")
    # After each accept, one short model call asks whether the steps still to come are still
    # needed; one that is not is shown as a drop to accept (engine/plans/plan_check.py). Off by
    # default: it is one more billed call per accepted step.
    plan_check: bool = setting(
        False,
        SWITCH,
        flag=Flag(
            "--plan-check", "while a step is reviewed, ask if the rest is still needed", True
        ),
    )
    # The longest reply each kind of model call may give (sent as its max_completion_tokens):
    # no call is unbounded, and a budget check knows the worst case before the call is made.
    reply_tokens_plan: int = setting(2048, "a whole number of tokens > 0", checks.positive)
    reply_tokens_propose: int = setting(8192, "a whole number of tokens > 0", checks.positive)
    reply_tokens_diagnose: int = setting(1024, "a whole number of tokens > 0", checks.positive)
    reply_tokens_fix: int = setting(8192, "a whole number of tokens > 0", checks.positive)
    context_window: int | None = setting(  # tokens; None → ask the server, else 16,384
        None,
        "a whole number of tokens ≥ 1024, or 'none' to ask the server",
        checks.at_least(1024),
        unit="tokens",
        when_none="from the server, else 16,384",
    )
    context_budget: int | None = setting(  # tokens of file contents per prompt; None → 30,000
        None,
        "a whole number of tokens ≥ 256, or 'none' for the default",
        checks.at_least(256),
        unit="tokens",
        when_none="30,000 tokens",
    )
    show_rounds: int = setting(  # SHOW rounds (the model asks to see more) before each edit
        3, "a whole number ≥ 0 (0: the model cannot ask)", checks.not_negative
    )
    show_lines: int = setting(400, "a whole number of lines ≥ 10", checks.at_least(10))
    stream_idle_timeout: float = setting(  # seconds with no text from the server before giving up
        60.0, "a number of seconds > 0", checks.positive, unit="s"
    )
    call_timeout: float = setting(  # seconds one model call may take in all, however live
        1800.0, "a number of seconds > 0", checks.positive, unit="s"
    )
    # Seconds a session without a human at the keys (headless) waits, paused with its plan, for
    # a model server that stopped answering mid-step; the TUI waits until you retry or quit.
    server_wait: float = setting(300.0, "a number of seconds ≥ 0", checks.not_negative, unit="s")
    # Extra variables the local sandbox passes to tests (names or PREFIX*, space/comma separated)
    # on top of the documented allow list.
    test_env: str | None = setting(
        None,
        "variable names or PREFIX* patterns, separated by spaces or commas",
        checks.env_patterns,
        yours=Yours(
            "it decides which of your environment variables the repository's tests can read"
        ),
    )
    # Paths git ignores that the tests need (generated code, a vendored folder), shown read-only
    # from your tree inside the sandbox, on top of the defaults per ecosystem (node_modules,
    # .venv, vendor): relative paths, separated by spaces or commas (sandbox/ignored.py).
    show_ignored: str | None = setting(
        None,
        "paths inside the repository such as 'generated/ vendor/', separated by spaces or "
        "commas (no absolute paths, no '..')",
        checks.inside_paths,
        yours=Yours(
            "it decides which of your untracked files (a .env, say) the repository's tests can read"
        ),
    )
    # "ask": you review every step. "auto": a step whose tests pass is committed unasked; one
    # that fails, or that no test verified, is reviewed as in "ask" (engine/reviews/approval.py).
    approval: str = setting(
        "ask",
        "'ask' (review every step) or 'auto' (a step whose tests pass is accepted)",
        checks.one_of(*checks.APPROVALS),
        flag=Flag(
            "--approval",
            "ask: review every step (default); auto: a step whose tests pass is committed "
            "unasked, one that fails or that no test verified is still reviewed",
            choices=checks.APPROVALS,
        ),
        yours=Yours(
            "whether steps are committed without your review is yours to choose", ("auto",)
        ),
    )
    # Files the model may not change (its edits to them are refused with the reason), such as
    # the tests of a benchmark exercise.
    read_only: str | None = setting(
        None,
        "file paths inside the repository, separated by spaces or commas (no absolute paths, "
        "no '..')",
        checks.inside_paths,
    )
    # The MCP servers' tools ([mcp_servers] in your user config, or the editor's): seconds one
    # tool call may take before the model is told it hung, and the rounds of tool calls one
    # model call may make before it must answer (config/mcp_servers.py, mcp_tools/).
    mcp_tool_timeout: float = setting(30.0, "a number of seconds > 0", checks.positive, unit="s")
    mcp_rounds: int = setting(4, "a whole number ≥ 0 (0: no tools offered)", checks.not_negative)


@dataclass
class LoadedSettings:
    settings: Settings
    sources: dict[str, str]  # key -> "default", "flag --model", "env TUI_ENGINEER_MODEL", a path…
    files_read: list[Path]
    # Where the user config is looked for (shown by format_settings even when it does not exist).
    user_config: Path | None = None
    # The repository's AGENTS.md (or CLAUDE.md, CONVENTIONS.md), when it has one.
    agents: AgentsFile | None = None
    # [mcp_servers] of the user's config (config/mcp_servers.py), and what was said of the
    # ones a repository's config named (ignored).
    mcp_servers: tuple[McpServerConfig, ...] = ()
    mcp_notices: tuple[str, ...] = ()
