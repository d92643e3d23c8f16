"""How a session works, as the settings chose it (config/settings.py declares each setting;
session/run.py copies the engine's share here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_engineer.verify.checks.found import Check


DEFAULT_REPLY_TOKENS = {"plan": 2048, "propose": 8192, "diagnose": 1024, "fix": 8192}
# Calls named otherwise are sized like the kind they do the work of.
REPLY_KIND = {
    "plan": "plan",
    "replan": "plan",
    "check": "diagnose",  # the plan check (engine/plans/plan_check.py): a few short lines
    "diagnose": "diagnose",
    "fix": "fix",
}


@dataclass
class EngineOptions:
    test_command: str
    test_timeout: float = 300.0
    max_fix_attempts: int = 3
    plan: bool = True
    diagnose: bool = True  # False: fixes go straight from the test report (bench configs)
    commit_hook_check: bool = True  # the user's pre-commit hook on each step (commit_check.py)
    # The project's declared checks run on each step (engine/steps/project_checks.py).
    declared_checks: tuple[Check, ...] = ()
    check_timeout: float = 120.0  # seconds each declared check may take
    max_tokens: int | None = None
    max_usd: float | None = None
    full_tests_always: bool = False  # every attempt runs the whole test command
    pipeline: bool = True  # prepare the next step while the human reviews this one
    # at most this many later steps prepared at once (engine/ahead/pipeline.py)
    parallel_steps: int = 3
    test_first: bool = True  # honour the plan's test_first steps (engine/steps/test_first.py)
    unverified: bool = False  # no test command: no tests run, every step is marked unverified
    write_tests: bool = False  # the repo has no tests yet: the first step writes them, test-first
    # Reply limit per kind of call: plan, propose, diagnose, fix (config reply_tokens_*).
    reply_tokens: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_REPLY_TOKENS))
    context_budget: int | None = None  # tokens of file contents per prompt; None: the default
    show_rounds: int = 3  # SHOW rounds the model may ask before each edit reply (0: none)
    show_lines: int = 400  # lines one SHOW answer may hold (the context window may allow fewer)
    # Seconds to wait, paused, for a model server that stopped answering (None: until the
    # human retries or quits); engine/server_wait.py.
    server_wait: float | None = 300.0
    baseline: bool = True  # run the suite on the starting commit: old failures are not a step's
    # A fix request's first calls wait this long at most for that run's list of failures.
    fix_list_wait: float = 30.0
    # after an accept, is the rest still needed? (engine/plans/plan_check.py)
    plan_check: bool = False
    # The repository's AGENTS.md, as a block of the system message of every call (prompts.py).
    conventions: str = ""
    approval: str = "ask"  # "auto": a passing step is accepted unasked (engine/reviews/approval.py)
    read_only: tuple[str, ...] = ()  # repo-relative files whose edits are refused

    def reply_limit(self, purpose: str) -> int:
        kind = REPLY_KIND.get(purpose, "propose")
        return self.reply_tokens.get(kind, DEFAULT_REPLY_TOKENS[kind])
