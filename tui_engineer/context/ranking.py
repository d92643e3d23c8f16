"""Which files (and which lines in them) matter for a request and a step.

Signals, strongest first: files the step or the text names, symbols the text names (a name
defined in few places counts more than one defined everywhere), frames of a failing test's
traceback, and files changed recently (uncommitted first, then the last commits)."""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.names import EXACT
from tui_engineer.base.safe_git import shadow_git_full_env
from tui_engineer.context.git_listing import uncommitted_names
from tui_engineer.context.map_memo import detached_head
from tui_engineer.context.repomap import RepoMap
from tui_engineer.context.symbols import Symbol

NAMED_FILE = 100.0
NAMED_BASENAME = 60.0
NAMED_SYMBOL = 50.0  # shared among the files defining the name (divided by √ of their number)
FRAME_LAST = 80.0  # the innermost frame inside the repository: where it broke
FRAME_OTHER = 30.0
CHANGED_NOW = 12.0  # uncommitted changes (in a session's shadow: the step's own edits)
CHANGED_RECENTLY = 6.0  # in the last RECENT_COMMITS commits, less for older ones
RECENT_COMMITS = 10
BROAD_CHANGE = 10  # a change to more files than this counts less for each
# The least score of a file outlined in the map (context/packing.py); a file only changed
# recently, scoring less, is not ranked at all (a file in a broad commit does not score it: one
# that touched 40,000 files made 40,000 entries, ~13 MiB).
RECENT_ALONE = 2.0
SHOWN_SCORE = 20.0  # files below this are listed in the map, their contents not shown
STUB_SUFFIXES = (".pyi", ".d.ts")
MAX_DEFINITIONS = 8  # a name defined in more files than this is too common to point anywhere

_PATHISH = re.compile(r"[\w./-]+\.[A-Za-z0-9]{1,6}")
# A file name in the text (tests/test_more.py) names a file, not symbols test_more and py.
_FILE_NAME = re.compile(
    r"[\w./-]*(?:/[\w.-]+|\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|md|rst|txt|toml|json|ya?ml|cfg|ini))"
    r"\b(?!\()"  # `response.json()` is a call, not a file
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_PYTEST_FRAME = re.compile(r"^(?P<path>[^\s:\"']+\.\w+):(?P<line>\d+):", re.MULTILINE)
_NATIVE_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')
_JS_FRAME = re.compile(r"\(?(?P<path>[^\s()]+\.\w+):(?P<line>\d+):\d+\)?")
_WORDS = frozenset(  # English words that are also common function names: not a symbol named
    "a an and are as at be by can do does for from has have if in is it make more not of on "
    "or should so that the this to use when with without add get set run test fix update new "
    "data file files name value values list item items result error errors step handle".split()
)


@dataclass
class Ranked:
    path: str
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    symbols: list[Symbol] = field(default_factory=list)  # symbols the text named, in this file
    lines: list[int] = field(default_factory=list)  # traceback frame lines in this file
    recent: float = 0.0  # the part of the score that is recent changes: it orders, never shows

    def add(self, score: float, reason: str) -> None:
        self.score += score
        if reason not in self.reasons:
            self.reasons.append(reason)


@dataclass
class Focus:
    """What a request, a step and a test report point at."""

    text: str = ""  # the request and the step, free text
    files: Sequence[str] = ()  # files the step names
    failures: str = ""  # test report text with tracebacks


def rank(repo: RepoMap, focus: Focus, changes: Sequence[Sequence[str]] = ()) -> list[Ranked]:
    """Files that matter, best first; `changes`: lists of changed files, newest first (the
    uncommitted ones, then each recent commit's)."""
    table: dict[str, Ranked] = {}

    def entry(path: str) -> Ranked:
        return table.setdefault(path, Ranked(path))

    for path in focus.files:
        if path in repo.files:
            entry(path).add(NAMED_FILE, "named in the step")
    _named_files(repo, focus.text, entry, set(focus.files))
    _named_symbols(repo, f"{focus.text}\n{focus.failures}", entry)
    for path, line, last in frames(repo, focus.failures):
        ranked = entry(path)
        ranked.add(FRAME_LAST if last else FRAME_OTHER, f"traceback line {line}")
        if line not in ranked.lines:
            ranked.lines.append(line)
    for path, weight in _recency(repo, changes).items():
        if path in table or weight >= RECENT_ALONE:
            ranked = entry(path)
            ranked.add(weight, "changed recently")
            ranked.recent += weight
    return sorted(table.values(), key=lambda r: (-r.score, r.path))


def _recency(repo: RepoMap, changes: Sequence[Sequence[str]]) -> dict[str, float]:
    """path -> the weight of its recent changes (summed over the commits that touched it)."""
    weights: dict[str, float] = {}
    for age, changed in enumerate(changes):
        weight = CHANGED_NOW if age == 0 else CHANGED_RECENTLY / age
        # A commit that touched everything (an import, a reformat) says little about any file.
        weight *= min(1.0, BROAD_CHANGE / max(1, len(changed)))
        for path in changed:
            if path in repo.files:
                weights[path] = weights.get(path, 0.0) + weight
    return weights


def _named_files(repo: RepoMap, text: str, entry, step_files: set[str]) -> None:
    """Files the text names; a file the step names counts once (the step's text names it too)."""
    by_base: dict[str, list[str]] | None = None
    for token in dict.fromkeys(t.removeprefix("./").rstrip(".") for t in _PATHISH.findall(text)):
        if token in step_files:
            continue
        if token in repo.files:
            entry(token).add(NAMED_FILE, "named")
            continue
        if by_base is None:
            by_base = {}
            for path in repo.files:
                by_base.setdefault(path.rsplit("/", 1)[-1], []).append(path)
        tail = token.rsplit("/", 1)[-1]
        found = [p for p in by_base.get(tail, []) if p.endswith(token)]
        for path in found[:MAX_DEFINITIONS]:
            entry(path).add(NAMED_BASENAME / len(found), "named")


def named_identifiers(text: str) -> list[str]:
    """Words of the text that may name a symbol: `backticked`, snake_case, CamelCase, dotted
    or followed by `(`; plain lower-case words only when they are not common English."""
    found: dict[str, None] = {}
    for match in _IDENTIFIER.finditer(_FILE_NAME.sub(" ", text)):
        word = match.group().strip(".")
        if len(word) < 3 or word.lower() in _WORDS:
            continue
        found.setdefault(word)
        if "." in word:  # module.func, self.method, Class.method: the parts count too
            for part in word.split(".")[-2:]:
                if len(part) >= 3 and part.lower() not in _WORDS and part != "self":
                    found.setdefault(part)
    return list(found)


def _named_symbols(repo: RepoMap, text: str, entry) -> None:
    words = named_identifiers(text)
    definitions = repo.defining_any(words)
    for word in words:
        defined = definitions.get(word, [])
        files = {path for path, _ in defined}
        if not defined or len(files) > MAX_DEFINITIONS:
            continue
        # A type stub (more.pyi beside more.py) restates a definition: it neither dilutes the
        # real one nor ranks like it.
        real = {path for path in files if not path.endswith(STUB_SUFFIXES)} or files
        strong = "_" in word or "." in word or not word.islower() or f"`{word}" in text
        weight = NAMED_SYMBOL * (1.0 if strong else 0.6) / math.sqrt(len(real))
        for path, symbol in defined:
            ranked = entry(path)
            if symbol not in ranked.symbols:
                ranked.symbols.append(symbol)
                ranked.add(weight if path in real else weight / 2, f"defines {symbol.name}")


def frames(repo: RepoMap, report: str) -> list[tuple[str, int, bool]]:
    """(path, line, innermost) of each traceback frame in a repository file, in order."""
    found: list[tuple[str, int]] = []
    root = str(repo.root)
    for pattern in (_PYTEST_FRAME, _NATIVE_FRAME, _JS_FRAME):
        for match in pattern.finditer(report):
            path = _repo_path(repo, root, match["path"])
            if path and (path, int(match["line"])) not in found:
                found.append((path, int(match["line"])))
        if found:
            break  # one style per report: a pytest report also quotes paths in messages
    return [(path, line, index == len(found) - 1) for index, (path, line) in enumerate(found)]


def _repo_path(repo: RepoMap, root: str, path: str) -> str | None:
    path = path.replace("\\", "/")
    if path.startswith(root + "/"):
        path = path[len(root) + 1 :]
    path = path.removeprefix("./")
    if path in repo.files:
        return path
    if path.startswith("/"):  # another copy of the repository (the shadow): match the tail
        parts = path.split("/")
        for cut in range(1, len(parts)):
            tail = "/".join(parts[cut:])
            if tail in repo.files:
                return tail
    return None


def recent_changes(
    root: Path, commits: int = RECENT_COMMITS, *, now: list[str] | None = None
) -> list[list[str]]:
    """Changed files, newest first: uncommitted ones (`now`, when the caller has them from git
    status already), then each of the last commits'."""
    if now is None:
        now = uncommitted_names(root)
    return [now, *_committed_names(root, commits)]


def _committed_names(root: Path, commits: int) -> list[list[str]]:
    """The files each of the last `commits` commits changed, newest first. A shadow's (HEAD
    detached at a known commit) are kept: every prompt of a session asks again, and the log of
    a commit that touched every file is 0.2 s at 200,000 files. A first commit (no parent) is
    left out: it lists every file there was (a project put under git at once), which says
    nothing of what is recent and took 0.13 s of a session's way to its first model call at
    200,000 files."""
    head = detached_head(root)
    if head is not None and (head, commits) in _LOGS:
        return _LOGS[head, commits]
    log = _git(root, "log", f"-{commits}", "--min-parents=1", "-z", "--name-only", "--format=%x00")
    names = _names_per_commit(log)
    if head is not None and log:
        if len(_LOGS) >= LOGS_KEPT:
            _LOGS.pop(next(iter(_LOGS)))
        _LOGS[head, commits] = names
    return names


LOGS_KEPT = 8  # commits whose recent history is kept (a session moves HEAD once per accept)
_LOGS: dict[tuple[str, int], list[list[str]]] = {}


def _names_per_commit(log: str) -> list[list[str]]:
    """`git log -z --name-only --format=%x00`: each commit is "\\0\\0\\n" and then its names,
    each ending in NUL (names are exact: never quoted, never split at a newline)."""
    blocks: list[list[str]] = [[]]
    for token in log.split("\0"):
        if not token:
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(token.removeprefix("\n") if not blocks[-1] else token)
    return [names for names in blocks if names]


def _git(root: Path, *args: str) -> str:
    env = shadow_git_full_env()  # root is often a shadow
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, check=False, env=env, **EXACT
    )
    return done.stdout if done.returncode == 0 else ""


def relevant(ranked: Iterable[Ranked]) -> list[Ranked]:
    """The ranked files whose contents belong in the prompt: something the request, the step
    or the tests point at (a recent change alone only puts a file higher in the map)."""
    return [r for r in ranked if r.score - r.recent >= SHOWN_SCORE]
