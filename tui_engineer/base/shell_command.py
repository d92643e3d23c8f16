"""The one reading of a shell command line, for everything that looks inside a test command
(the runner modules, detection, the sandboxes, the stop messages): shlex's POSIX words with the
shell's operators (`&&`, `||`, `;`, `|`, `&`, redirections, parentheses) as tokens of their own,
whether or not spaces surround them (`a&&b`, `x>log`).

A simple command is one program and its words, without operators or redirections. Runners add
arguments only to simple commands: an argument added to `cd tests && pytest | tee log` could
land on the wrong program."""

from __future__ import annotations

import shlex
from pathlib import Path

# Tokens that separate one command from the next.
SEPARATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&"})
_PUNCTUATION = frozenset("();<>|&")


def tokens(command: str) -> list[str] | None:
    """Every word and operator of `command`; None when it does not parse (an open quote)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""  # as shlex.split: a `#` inside a word is part of it
    try:
        return list(lexer)
    except ValueError:
        return None


def is_operator(token: str) -> bool:
    """An operator or redirection token (`&&`, `|`, `>`, `>&`, `(`), not a word."""
    return bool(token) and set(token) <= _PUNCTUATION


def without_assignments(words: list[str]) -> list[str]:
    """`words` after any leading `VAR=value` assignments."""
    index = 0
    while index < len(words) and _assignment(words[index]):
        index += 1
    return words[index:]


def _assignment(word: str) -> bool:
    return "=" in word and not word.startswith(("-", "/", "."))


def words(command: str) -> list[str]:
    """The words of a simple command after its `VAR=value` prefixes; [] for a compound command
    (operators, redirections), an empty one, or one that does not parse."""
    found = tokens(command)
    if not found or any(is_operator(t) for t in found):
        return []
    return without_assignments(found)


def commands(command: str) -> list[list[str]]:
    """The simple commands of a command line, split at `&&`, `||`, `;`, `|` and `&` (their
    redirections left in); [] when it does not parse."""
    found = tokens(command)
    if found is None:
        return []
    parts: list[list[str]] = [[]]
    for token in found:
        if token in SEPARATORS:
            parts.append([])
        else:
            parts[-1].append(token)
    return [part for part in parts if part]


def program(command: str) -> str | None:
    """The program the command line starts first (after `VAR=value` prefixes), or None when
    it starts with no plain word (a subshell, a redirection) or does not parse."""
    first = commands(command)[:1]
    rest = without_assignments(first[0]) if first else []
    return rest[0] if rest and not is_operator(rest[0]) else None


def last_command(command: str) -> str:
    """The text of the command after the last `&&`: what `cd tests && python runtests.py`
    runs its tests with."""
    return command.rsplit("&&", 1)[-1].strip()


def python_module(words: list[str]) -> str | None:
    """The module a `python -m MODULE …` command runs (any python: `.venv/bin/python3`)."""
    if not words or not Path(words[0]).name.startswith("python"):
        return None
    for flag, value in zip(words[1:], words[2:], strict=False):
        if flag == "-m":
            return value
        if not flag.startswith("-"):
            return None  # a script runs, not a module
    return None
