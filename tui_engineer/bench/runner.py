"""One bench run: a task × config × repeat, in its own temp repo, with its own shadow worktree
and sandbox, through the same headless engine as `tui-engineer run`."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.bench.configs import Config
from tui_engineer.bench.hidden import HiddenResult, head_sha, run_hidden
from tui_engineer.bench.results import RunResult, count_events
from tui_engineer.bench.reviewer import BenchReviewer
from tui_engineer.bench.task import Task
from tui_engineer.config.settings import Settings
from tui_engineer.engine import events as ev
from tui_engineer.records.recorder import runs_dir
from tui_engineer.sandbox.ignored import build_cache
from tui_engineer.session.options import RunOptions
from tui_engineer.session.prepare import Prepared, prepare
from tui_engineer.session.run import run_prepared


@dataclass(frozen=True)
class RunSpec:
    """Everything a run needs, picklable (Ray ships it to a worker as is)."""

    task: Task
    config: Config
    repeat: int
    flags: dict[str, object] = field(default_factory=dict)  # model, server, sandbox, budgets
    replay: str | None = None  # a recorded run to replay instead of calling a model

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task.name, self.config.name, self.repeat)


@dataclass
class RunOutput:
    result: RunResult
    record: str  # the run record's JSON lines ("" when the session never started)


def make_repo(root: Path, files: dict[str, str]) -> None:
    """The task's starting repo: its files in one commit, on a fresh `git init`."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    identity = ["-c", "user.name=tui-engineer bench", "-c", "user.email=bench@tui-engineer"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "task"]):
        subprocess.run(["git", *identity, *args], cwd=root, check=True, capture_output=True)


def _options(spec: RunSpec, repo: Path) -> RunOptions:
    # Each run starts in a fresh repo with no coverage data, so choosing the affected tests
    # first would only add a probe per run: the whole suite runs (a config may say otherwise).
    # No baseline: a task's tests fail on its starting commit by design, and are its to fix.
    # No pause on a model server gone: the task is scored as an error at once (a dead server
    # held every later task for server_wait, 300 s, each); a config may set it.
    flags = {
        "full_tests_always": True,
        "baseline": False,
        "server_wait": 0,
        **spec.flags,
        **spec.config.settings,
    }
    if spec.task.test_command:
        flags["test_command"] = spec.task.test_command
    if spec.task.read_only:
        flags["read_only"] = " ".join([str(flags.get("read_only") or ""), *spec.task.read_only])
    return RunOptions(
        request=spec.task.request,
        repo=repo,
        flags=flags,
        plan=spec.config.plan,
        diagnose=spec.config.diagnose,
        replay=Path(spec.replay) if spec.replay else None,
    )


class _HiddenCache:
    """Hidden tests run once per commit: still_wrong and the verdict often ask about the same."""

    def __init__(self, repo: Path, task: Task) -> None:
        self.repo, self.task = repo, task
        self.settings = Settings()
        self._seen: dict[str, HiddenResult] = {}
        self.seconds = 0.0  # time in hidden test commands, for the harness-overhead numbers

    async def __call__(self) -> HiddenResult:
        sha = await asyncio.to_thread(head_sha, self.repo)
        if sha not in self._seen:
            self._seen[sha] = await run_hidden(
                self.repo, self.task.hidden, self.task.hidden_command, self.settings
            )
            self.seconds += self._seen[sha].seconds
        return self._seen[sha]


async def _session(
    spec: RunSpec, repo: Path, result: RunResult, events: list[ev.Event]
) -> tuple[BenchReviewer, _HiddenCache]:
    hidden = _HiddenCache(repo, spec.task)
    reviewer = BenchReviewer(spec.task.follow_ups, hidden)

    def sink(event: ev.Event) -> None:
        events.append(event)
        if isinstance(event, ev.TestsFinished) and event.passed + event.failed > 0:
            reviewer.ran = True

    prepared: Prepared = await asyncio.to_thread(prepare, _options(spec, repo))
    hidden.settings = prepared.settings
    session = await run_prepared(prepared, reviewer, sink)
    result.outcome = session.outcome
    if session.outcome == "error":
        result.error = session.message
    return reviewer, hidden


def _read_record(repo: Path) -> str:
    records = sorted(runs_dir(repo).glob("*.jsonl"))
    return records[-1].read_text(encoding="utf-8") if records else ""


async def run_one(spec: RunSpec) -> RunOutput:
    """Run one task under one config. A task's failure (a server error, a budget that ran out,
    a plan the model could not make) is recorded in the result. A setup problem that every run
    would hit (no API key, an unusable setting) raises the UserError: the bench stops."""
    result = RunResult(spec.task.name, spec.config.name, spec.repeat)
    events: list[ev.Event] = []
    started = time.monotonic()
    # A cancelled run (another run hit a setup error) may still have a git thread writing here.
    with tempfile.TemporaryDirectory(prefix="tui-bench-", ignore_cleanup_errors=True) as tmp:
        repo = Path(tmp) / "repo"
        await asyncio.to_thread(make_repo, repo, spec.task.files)
        reviewer, hidden = await _session(spec, repo, result, events)
        result.follow_ups = reviewer.follow_ups_used
        result.hidden_seconds = hidden.seconds
        if reviewer.hidden is not None:
            result.worked = reviewer.hidden.passed
            result.perfect = result.worked and reviewer.follow_ups_used == 0
            result.hidden_summary = reviewer.hidden.summary
        count_events(result, events)
        record = _read_record(repo)
        # The build cache of a repo that is gone (go's is tens of MB a run) would stay forever.
        await asyncio.to_thread(shutil.rmtree, build_cache(repo), ignore_errors=True)
    result.wall_seconds = time.monotonic() - started
    return RunOutput(result, record)
