"""Helpers for end-to-end engine tests: model replies in the edit/plan formats, and a run helper."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from tui_engineer.engine import events as ev
from tui_engineer.engine.reviews.approval import AutoReviewer
from tui_engineer.engine.reviews.review import Decision, Reviewer
from tui_engineer.engine.session import SessionResult
from tui_engineer.session.run import RunOptions, run_session
from tui_engineer.vcs.repo import open_repo
from tui_engineer.vcs.shadow_place import shadow_home


def plan_reply(*titles: str) -> str:
    steps = [{"title": t, "description": t, "files": [], "verify": "pytest"} for t in titles]
    return "Here is my plan.\n\n```json\n" + json.dumps({"steps": steps}) + "\n```\n"


def edit(path: str, search: str, replace: str) -> str:
    return f"{path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def create(path: str, content: str) -> str:
    return edit(path, "", content)


# A fake key, and edits on the calc sample repo (tests/conftest.py SAMPLE_FILES) shared by tests.
KEY = "sk-test-secret-key-0123456789"
SUB = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
)
# After SUB: a division step (planned from "what is still wrong?" in tests).
DIV = edit(
    "calc.py", "    return a - b\n", "    return a - b\n\n\ndef div(a, b):\n    return a / b\n"
)
# A correct mul, on the initial calc.py as on one with SUB.
MUL = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
)
# Step 2 edits a line that only exists once step 1's proposal (SUB) is in: it must be built on it.
MUL_ON_SUB = edit(
    "calc.py", "    return a - b\n", "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
)
MUL_BUGGY = edit(
    "calc.py", "    return a + b\n", "    return a + b\n\n\ndef mul(a, b):\n    return a + b  # x\n"
) + edit(
    "tests/test_calc.py",
    "    assert add(2, 3) == 5\n",
    "    assert add(2, 3) == 5\n\n\ndef test_mul():\n    from calc import mul\n"
    "    assert mul(4, 3) == 12\n",
)

# A repo with one file far larger than a prompt shows: `big.py`, thousands of constants with a
# wrong `scale` deep inside, and a test that catches it (the context engine's and SHOW's tests).
SCALE_TEST = "from big import scale\n\n\ndef test_scale():\n    assert scale(2) == 4\n"


# Flags: a change's affected tests run first on every attempt, however quick the whole suite
# (by default a suite under 3 s runs whole, and run_headless asks for the whole suite each time).
AFFECTED_AT_ONCE = {"full_tests_always": False, "affected_after_seconds": 0}


def big_module(lines: int, at: int, function: list[str]) -> str:
    """`lines` lines of `VALUE_n = n` with `function`'s lines standing from line `at` on."""
    body = [f"VALUE_{n} = {n}" for n in range(1, lines + 1)]
    body[at - 1 : at - 1 + len(function)] = function
    return "\n".join(body) + "\n"


def big_repo_files(module: str, more: dict[str, str] | None = None) -> dict[str, str]:
    """big.py (`module`) and its test, for `make_repo`."""
    return {"big.py": module, "tests/test_big.py": SCALE_TEST, **(more or {})}


def shadows_left(repo: Path) -> list[str]:
    """The shadow worktrees (the session's, and a prepared step's) still on disk: a session
    that ended, however, leaves none."""
    with open_repo(repo) as opened:
        home = shadow_home(opened)
    return sorted(p.name for p in home.iterdir()) if home.is_dir() else []


class StepReviewer:
    """A base for the tests' scripted humans, who only decide on steps (a subclass's `review`):
    asked what is still wrong after the last step, nothing; asked for a verdict, none. The
    session then ends when its plan is done."""

    async def still_wrong(self) -> str | None:
        return None

    async def verdict(self) -> None:
        return None


class ReadingReviewer(StepReviewer):
    """A human who accepts every proposal after reading it for `seconds` (the benchmarks'
    reader, whose reading a prepared next step can hide)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    async def review(self, proposal: object) -> Decision:
        await asyncio.sleep(self.seconds)
        return Decision.accept()


class Collector:
    """An event sink that keeps every event."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)

    def of(self, kind: type[ev.Event]) -> list:
        return [e for e in self.events if isinstance(e, kind)]


async def run_headless(
    repo: Path,
    request: str,
    base_url: str,
    *,
    reviewer: Reviewer | None = None,
    sink: Callable[[ev.Event], None] | None = None,
    inbox: asyncio.Queue[str] | None = None,
    replay: Path | None = None,
    **flags: object,
) -> tuple[SessionResult, Collector]:
    collector = Collector()

    def both(event: ev.Event) -> None:
        collector(event)
        if sink is not None:
            sink(event)

    plan = bool(flags.pop("plan", True))
    no_tests = str(flags.pop("no_tests", ""))  # "write" / "unverified": a repo without tests
    # These scenarios count test runs: one full run per attempt, as with --full-tests-always.
    # Affected-tests-first has its own tests (test_engine_selection.py), which pass False.
    flags.setdefault("full_tests_always", True)
    # Likewise no step prepared during review (test_engine_pipeline.py turns it on): scripted
    # replies are served in the order the calls arrive.
    flags.setdefault("pipeline", False)
    options = RunOptions(
        request=request,
        repo=repo,
        flags={"base_url": base_url, "model": "test-model", **flags},
        plan=plan,
        replay=replay,
        no_tests=no_tests,
    )
    result = await run_session(options, reviewer or AutoReviewer(), both, inbox)
    return result, collector
