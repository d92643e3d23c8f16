"""One reading of a test command as words, for every runner module: shell-split, `VAR=value`
prefixes dropped. A compound command (`a && b`, a pipe, a redirection) reads as no words: an
argument added to it could land on the wrong program, so runners leave such commands alone."""

from __future__ import annotations

import shlex
from pathlib import Path

SHELL_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ">", ">>", "<", "2>", "2>&1", "(", ")"})


def words(command: str) -> list[str]:
    """The command's words after any `VAR=value` prefixes; [] for a compound or broken one."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        return []
    if any(t in SHELL_OPERATORS or t.endswith(";") for t in tokens):
        return []
    while tokens and "=" in tokens[0] and not tokens[0].startswith(("-", "/", ".")):
        tokens = tokens[1:]
    return tokens


def python_module(tokens: list[str]) -> str | None:
    """The module a `python -m MODULE …` command runs (any python: `.venv/bin/python3`)."""
    if not tokens or not Path(tokens[0]).name.startswith("python"):
        return None
    for flag, value in zip(tokens[1:], tokens[2:], strict=False):
        if flag == "-m":
            return value
        if not flag.startswith("-"):
            return None  # a script runs, not a module
    return None
