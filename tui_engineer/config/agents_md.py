"""The repository's instructions for coding agents: AGENTS.md, else CLAUDE.md, else
CONVENTIONS.md. Two things are taken from it, nothing else:

- its text, as conventions for the model's system message (cut to MAX_CHARS);
- the test command it names, when it names one clearly, either on a line of its own
  (`Test command: pytest -q`, "Run the tests with `pytest -q`") or as the only command of a
  fenced code block under a heading that mentions tests. Anything less clear is ignored: a
  wrong guess would run something that is not the tests.

The file is a repository's, like its .tui-engineer.toml: its command runs contained like any
other, and nothing in it can widen containment (it has no way to say sandbox, network or env).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

NAMES = ("AGENTS.md", "CLAUDE.md", "CONVENTIONS.md")
MAX_CHARS = 4000  # of conventions in the system message: every call of a session pays for them
MAX_READ = 256 * 1024  # bytes read at most: a huge file is cut anyway
MAX_COMMAND = 200  # a longer "command" is prose, not a test command

_LINE = re.compile(r"^\s*[-*]?\s*\**test command\**\s*:\s*(?P<cmd>.+?)\s*$", re.IGNORECASE)
_RUN_WITH = re.compile(r"\brun (?:the |all )?tests? with:?\s*`(?P<cmd>[^`]+)`", re.IGNORECASE)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(?P<title>.*)$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
# Words that start a command: a line that starts otherwise ("see the Makefile") is prose.
_COMMAND_START = re.compile(r"^(\./|[\w.\-/]+(\s|$))")
_PROSE = re.compile(r"^(see|use|the|it|we|our|all)\b", re.IGNORECASE)


@dataclass(frozen=True)
class AgentsFile:
    path: Path
    conventions: str  # the text for the system message, at most MAX_CHARS
    size: int  # characters in the file (as read)
    cut: bool  # the conventions are the file's beginning only
    test_command: str | None

    @property
    def name(self) -> str:
        return self.path.name

    def cut_notice(self) -> str:
        return (
            f"{self.name} is {self.size:,} characters: the model is given its first "
            f"{len(self.conventions):,} (at most {MAX_CHARS:,}); the rest is left out"
        )


def read_agents_file(root: Path) -> AgentsFile | None:
    """The first of NAMES in `root` that is a file inside the repository, else None."""
    for name in NAMES:
        path = root / name
        text = _read_inside(root, path)
        if text is not None:
            return _parse(path, text)
    return None


def _read_inside(root: Path, path: Path) -> str | None:
    """Its text, or None: missing, not a file, or a symlink leading out of the repository
    (whatever it points at would be sent to the model)."""
    try:
        real = path.resolve(strict=True)
        if not real.is_file() or not real.is_relative_to(root.resolve()):
            return None
        with real.open("rb") as handle:
            data = handle.read(MAX_READ)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def _parse(path: Path, text: str) -> AgentsFile:
    text = text.replace("\r\n", "\n").strip()
    conventions, cut = _bounded(text)
    return AgentsFile(path, conventions, len(text), cut, find_test_command(text))


def _bounded(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_CHARS:
        return text, False
    head = text[:MAX_CHARS]
    line_end = head.rfind("\n")
    return (head[:line_end] if line_end > 0 else head).rstrip(), True


def find_test_command(text: str) -> str | None:
    """The test command the file names clearly, else None (see the module's docstring)."""
    for line in text.splitlines():
        for pattern in (_LINE, _RUN_WITH):
            found = pattern.search(line)
            if found:
                command = _clean(found["cmd"])
                if command:
                    return command
    return _fenced_under_test_heading(text)


def _fenced_under_test_heading(text: str) -> str | None:
    heading = ""
    lines: Iterator[str] = iter(text.splitlines())
    for line in lines:
        title = _HEADING.match(line)
        if title:
            heading = title["title"]
        elif _FENCE.match(line):
            block = _read_block(lines)
            if re.search(r"\btests?\b|\btesting\b", heading, re.IGNORECASE):
                commands = [c for c in block if c and not c.startswith("#")]
                if len(commands) == 1:
                    return _clean(commands[0])
    return None


def _read_block(lines: Iterator[str]) -> list[str]:
    block = []
    for line in lines:
        if _FENCE.match(line):
            break
        block.append(line.strip().removeprefix("$ ").strip())
    return block


def _clean(raw: str) -> str | None:
    """The command, or None when it does not look like exactly one."""
    command = raw.strip().strip("`").strip().rstrip(".").strip()
    if not command or len(command) > MAX_COMMAND or "`" in command:
        return None
    if any(ord(c) < 32 for c in command) or _PROSE.match(command):
        return None
    return command if _COMMAND_START.match(command) else None
