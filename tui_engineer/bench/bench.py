"""A whole bench: every (task × config × repeat) run, in parallel, resumable, with progress."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_engineer.base.errors import UserError
from tui_engineer.bench.configs import Config
from tui_engineer.bench.polyglot import aider_table, shapes_table
from tui_engineer.bench.progress import BenchFinished, BenchStarted, ProgressSink, RunFinished
from tui_engineer.bench.results import RunResult, append_result, read_results, write_tables
from tui_engineer.bench.runner import RunOutput, RunSpec, run_one
from tui_engineer.bench.task import Task

META_FILE = "bench.json"
RECORDS = "records"


@dataclass
class BenchRequest:
    suite: str
    tasks: list[Task]
    configs: list[Config]
    repeats: int
    out: Path
    flags: dict[str, object] = field(default_factory=dict)
    replay: Path | None = None  # a recorded bench folder whose records stand in for the model


def record_name(key: tuple[str, str, int]) -> str:
    task, config, repeat = key
    return f"{task}__{config}__{repeat}.jsonl"


def plan_runs(request: BenchRequest) -> list[RunSpec]:
    specs = []
    for repeat in range(request.repeats):
        for config in request.configs:
            for task in request.tasks:
                spec = RunSpec(task, config, repeat, dict(request.flags))
                if request.replay is not None:
                    record = request.replay / RECORDS / record_name(spec.key)
                    if not record.is_file():
                        raise UserError(f"--replay: {request.replay} has no record {record.name}")
                    spec = RunSpec(task, config, repeat, spec.flags, str(record))
                specs.append(spec)
    return specs


def _meta(request: BenchRequest) -> dict[str, object]:
    flags = {k: v for k, v in request.flags.items() if k in {"model", "base_url", "sandbox"}}
    return {
        "suite": request.suite,
        "configs": {c.name: {"plan": c.plan, "diagnose": c.diagnose, **c.settings}
                    for c in request.configs},
        "repeats": request.repeats,
        **flags,
    }  # fmt: skip


def _check_meta(out: Path, meta: dict[str, object]) -> None:
    """A resumed bench must be the same bench: a folder of another suite is refused."""
    path = out / META_FILE
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("suite") != meta["suite"]:
            raise UserError(
                f"{out} holds a bench of suite '{old.get('suite')}', not '{meta['suite']}': "
                "give another --out folder to start a new bench."
            )
        old_configs = dict(old.get("configs", {}))
        old_configs.update(meta["configs"])  # type: ignore[arg-type]
        meta = {**meta, "configs": old_configs}
    path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


Executor = Callable[[Sequence[RunSpec], Callable[[RunOutput], None]], Awaitable[None]]


def local_executor(workers: int) -> Executor:
    """Runs in this process, at most `workers` at a time (tests and model calls are the slow
    parts, and both wait on other processes)."""

    async def execute(specs: Sequence[RunSpec], done: Callable[[RunOutput], None]) -> None:
        gate = asyncio.Semaphore(max(1, workers))

        async def one(spec: RunSpec) -> None:
            async with gate:
                done(await run_one(spec))

        # A TaskGroup: a setup error in one run cancels the others (they would all hit it).
        try:
            async with asyncio.TaskGroup() as group:
                for spec in specs:
                    group.create_task(one(spec))
        except* UserError as errors:
            raise errors.exceptions[0] from None

    return execute


async def run_bench(
    request: BenchRequest, execute: Executor, progress: ProgressSink | None = None
) -> list[RunResult]:
    """Run what is not finished yet in `request.out`, appending each result as it lands."""
    out = request.out
    (out / RECORDS).mkdir(parents=True, exist_ok=True)
    _check_meta(out, _meta(request))
    specs = plan_runs(request)
    wanted = {spec.key for spec in specs}
    finished = {r.key: r for r in read_results(out) if r.key in wanted}
    todo = [spec for spec in specs if spec.key not in finished]
    results = list(finished.values())
    emit = progress or (lambda _event: None)
    worked = sum(r.worked for r in results)
    emit(BenchStarted(total=len(specs), done=len(results), worked=worked))

    def landed(output: RunOutput) -> None:
        nonlocal worked
        result = output.result
        if output.record:
            result.record = f"{RECORDS}/{record_name(result.key)}"
            (out / result.record).write_text(output.record, encoding="utf-8")
        append_result(out, result)
        results.append(result)
        worked += result.worked
        emit(RunFinished(result, done=len(results), total=len(specs), worked=worked))

    try:
        await execute(todo, landed)
    finally:
        more = aider_table(results) + "\n" + shapes_table(results) if results else ""
        write_tables(out, results, more)
        emit(BenchFinished(done=len(results), total=len(specs), worked=worked))
    return results
