"""The repository map at session start: built beside the baseline's tests (not after them, on
the way to the first model call), said with `context_ready`, and taken from the cache by git's
blob id in the next session, which reads no file the first one saw. Real engine, real openai
client over HTTP to the scripted server, real git and pytest."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time
from pathlib import Path

import pytest

from tests.engine_support import KEY, edit, run_headless
from tests.scripted_server import Gate, Reply, ScriptedServer
from tests.tiers import whole_session
from tui_engineer.context.map_cache import cache_file, cached_count
from tui_engineer.engine import events as ev

pytest.importorskip("tree_sitter_python", reason="the map needs the tree-sitter grammars")

MODULES = 12
FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def add(a, b):\n    return a - b\n",
    **{f"pkg/mod{i}.py": f"def f{i}(x):\n    return x + {i}\n" for i in range(MODULES)},
    "tests/test_core.py": "from pkg.core import add\n\n\ndef test_add():\n"
    "    assert add(2, 3) == 5\n",
    # The user's suite takes a while: the map is ready long before it ends.
    "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(1.5)\n",
}
SOURCES = len(FILES)  # every file is Python
FIX = edit("pkg/core.py", "    return a - b\n", "    return a + b\n")


@whole_session
async def test_the_map_is_built_beside_the_baseline_and_reused_by_the_next_session(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    repo: Path = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    result, seen = await run_headless(repo, "fix add in pkg/core.py", scripted_server.base_url,
                                      plan=False)  # fmt: skip
    assert result.exit_code == 0, result.message
    kinds = [type(e) for e in seen.events]
    ready = seen.of(ev.ContextReady)
    assert len(ready) == 1
    # Ready while the baseline's tests still ran: the propose call waited for them only.
    assert kinds.index(ev.ContextReady) < kinds.index(ev.BaselineReady)
    assert kinds.index(ev.BaselineReady) < kinds.index(ev.ModelCallStarted)
    assert ready[0].files_read == SOURCES and ready[0].parsed == SOURCES  # a cold cache
    # The wait before the session started is said too: the first shadow is a full checkout.
    (shadow,) = seen.of(ev.ShadowReady)
    assert not shadow.from_spare and kinds.index(ev.ShadowReady) < kinds.index(ev.ContextReady)

    scripted_server.script(Reply(text=edit("pkg/mod0.py", "    return x + 0\n", "    return x\n")))
    result, seen = await run_headless(repo, "simplify f0 in pkg/mod0.py",
                                      scripted_server.base_url, plan=False)  # fmt: skip
    assert result.exit_code == 0, result.message
    (again,) = seen.of(ev.ContextReady)
    # A new shadow, yet only the file the first session changed is read: git's blob ids vouch
    # for the rest, whose symbols come from the first session's cache.
    assert (again.files_read, again.parsed) == (1, 1)
    assert again.files_reused == SOURCES - 1
    assert [e.from_spare for e in seen.of(ev.ShadowReady)] == [True]  # the first one's files


@whole_session
async def test_a_map_cut_short_by_its_bound_still_shows_the_named_file_and_says_so(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47: on a repository too big to read within the map's time bound (here a bound of
    0 s: nothing beyond what the request names), the first prompt has the file the request
    names, says the map was cut short, and the session goes on to its commit. (No background
    reading here: on a repository this small it would have read the rest before the prompt.)"""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr("tui_engineer.engine.steps.repo_context.MAP_SECONDS", 0.0)
    monkeypatch.setattr("tui_engineer.engine.steps.repo_context.start_filling", _no_filler)
    repo: Path = make_repo(FILES)
    scripted_server.script(Reply(text=FIX))
    result, seen = await run_headless(repo, "fix add in pkg/core.py", scripted_server.base_url,
                                      plan=False)  # fmt: skip
    assert result.exit_code == 0, result.message
    (ready,) = seen.of(ev.ContextReady)
    assert ready.files_left > 0 and ready.files_read < SOURCES
    assert ready.files_read == 1  # the file the request names, read by the first map itself
    prompt = "\n".join(str(m["content"]) for m in scripted_server.chat_requests[0].messages)
    assert "def add(a, b):\n    return a - b" in prompt
    assert "The map was cut short" in prompt


@whole_session
async def test_a_map_cut_short_is_read_whole_in_the_background_while_the_model_answers(
    make_repo, scripted_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47: what the first map left unread is read by a background process at the lowest
    priority while the session goes on (here while the model answers), into the cache: the
    next session reuses every file, and nothing of it runs once the session has ended."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr("tui_engineer.engine.steps.repo_context.MAP_SECONDS", 0.0)
    repo: Path = make_repo(FILES)
    cache = cache_file(repo)
    gate = Gate()
    scripted_server.script(Reply(text=FIX, hold=gate))
    session = asyncio.ensure_future(
        run_headless(repo, "fix add in pkg/core.py", scripted_server.base_url, plan=False)
    )
    await gate.arrived(60)
    try:
        deadline = time.monotonic() + 60
        while _cached(cache) < SOURCES and time.monotonic() < deadline:  # read meanwhile
            await asyncio.sleep(0.1)
        assert _cached(cache) == SOURCES
    finally:
        gate.open()
    result, seen = await session
    assert result.exit_code == 0, result.message
    (ready,) = seen.of(ev.ContextReady)
    assert ready.files_left > 0  # the first map was cut short
    assert not _fillers(repo)  # stopped with the session

    git_reset = ("git", "-C", str(repo), "reset", "-q", "--hard", "HEAD~1")
    assert subprocess.run(git_reset).returncode == 0
    monkeypatch.setattr("tui_engineer.engine.steps.repo_context.MAP_SECONDS", 3.0)
    scripted_server.script(Reply(text=FIX))
    result, seen = await run_headless(repo, "fix add in pkg/core.py", scripted_server.base_url,
                                      plan=False)  # fmt: skip
    assert result.exit_code == 0, result.message
    (again,) = seen.of(ev.ContextReady)
    assert (again.files_read, again.files_reused, again.files_left) == (0, SOURCES, 0)


async def _no_filler(root: Path, cache_root: Path) -> None:
    return None


def _cached(cache: Path) -> int:
    """How many files' symbols the map's cache holds."""
    return cached_count(cache)


def _fillers(repo: Path) -> list[str]:
    """Background map readers still running on `repo`'s shadows (their command lines)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            words = cmdline.read_bytes().split(b"\0")
            if b"tui_engineer.context.fill" in words and str(repo).encode() in b" ".join(words):
                found.append(b" ".join(words).decode(errors="replace"))
    return found
