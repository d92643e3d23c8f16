"""`tui-engineer bench …`: argument parsing and the subcommands (run, compare, export)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tui_engineer.base.errors import UserError


def build_bench_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer bench",
        description="Run a suite of tasks through the engine and score each run with hidden "
        "tests. Also: 'tui-engineer bench compare A B', 'tui-engineer bench export'. "
        "See docs/bench.md.",
    )
    parser.add_argument(
        "suite", help="humaneval, repo-tasks, exercism (then PATH), or a folder of task folders"
    )
    parser.add_argument(
        "path", nargs="?", type=Path,
        help="exercism: a track in Exercism's layout, or a checkout of several (the polyglot "
        "benchmark)",
    )  # fmt: skip
    parser.add_argument(
        "--languages", help="exercism: only these languages, comma-separated (python,rust,...)"
    )
    parser.add_argument(
        "--oracle", action="store_true",
        help="exercism: answer with each exercise's example solution (a check of the harness)",
    )  # fmt: skip
    parser.add_argument(
        "--config", action="append", dest="config_names", metavar="NAME",
        help="a config to run (repeatable; default: 'default')",
    )  # fmt: skip
    parser.add_argument("--configs", type=Path, help="a TOML file of configs (default: shipped)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per task and config")
    parser.add_argument("--workers", type=int, default=1, help="runs at the same time")
    parser.add_argument("--ray", metavar="ADDRESS", help="run on Ray: an address or 'local'")
    parser.add_argument("--out", type=Path, help="results folder (default: bench-results/SUITE)")
    parser.add_argument("--task", action="append", dest="task_names", help="only this task")
    parser.add_argument("--limit", type=int, help="only the first N tasks of the suite")
    parser.add_argument(
        "--replay", type=Path, help="a bench folder whose records replace the model"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--tui", action="store_true", help="show live progress in the TUI")
    group = parser.add_argument_group("model and sandbox (the same for every config)")
    group.add_argument("--model", help="model name")
    group.add_argument("--base-url", help="OpenAI-compatible server URL")
    group.add_argument("--sandbox", choices=["local", "docker"], help="where tests run")
    group.add_argument("--test-timeout", type=float, help="seconds before a test run is killed")
    group.add_argument("--max-usd", type=float, help="money budget per run (USD)")
    group.add_argument("--max-tokens", type=int, help="token budget per run")
    group.add_argument("--max-minutes", type=float, help="wall-clock budget per run")
    return parser


def _flags(args: argparse.Namespace) -> dict[str, object]:
    keys = ("model", "base_url", "sandbox", "test_timeout", "max_usd", "max_tokens")
    flags: dict[str, object] = {k: getattr(args, k) for k in keys if getattr(args, k) is not None}
    if args.max_minutes is not None:
        flags["max_wall_seconds"] = args.max_minutes * 60
    return flags


def _check_counts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    for name in ("repeats", "workers", "limit"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")


def _suite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[str, list]:
    """The suite's name (as bench.json keeps it) and its tasks."""
    from tui_engineer.bench.tasks import load_suite

    if args.suite != "exercism":
        if args.path is not None or args.languages or args.oracle:
            parser.error("PATH, --languages and --oracle are for 'bench exercism PATH'")
        return args.suite, load_suite(args.suite)
    from tui_engineer.bench.exercism import exercism_tasks

    if args.path is None:
        parser.error("exercism needs the PATH of a track or of the polyglot benchmark's checkout")
    languages = [x.strip() for x in (args.languages or "").split(",") if x.strip()]
    path = args.path.resolve()
    return f"exercism {path}", exercism_tasks(path, languages or None)


def _request(parser: argparse.ArgumentParser, args: argparse.Namespace):  # -> BenchRequest
    from tui_engineer.bench.bench import BenchRequest
    from tui_engineer.bench.configs import load_configs, pick
    from tui_engineer.bench.tasks import select

    name, suite = _suite(parser, args)
    tasks = select(suite, args.task_names, None)
    if args.suite == "exercism":  # of the tasks asked for, those this machine can run
        from tui_engineer.bench.toolchains import checked

        tasks, left_out = checked(tasks)
        for line in left_out:
            print(line, file=sys.stderr)
    tasks = select(tasks, None, args.limit)
    configs = pick(load_configs(args.configs), args.config_names)
    out = args.out or Path("bench-results") / Path(args.suite).name
    return BenchRequest(
        name, tasks, configs, args.repeats, out.resolve(), _flags(args),
        args.replay.resolve() if args.replay else None,
    )  # fmt: skip


def _executor(args: argparse.Namespace):
    if args.ray:
        from tui_engineer.bench.ray_executor import ray_executor

        return ray_executor(args.ray)
    from tui_engineer.bench.bench import local_executor

    return local_executor(args.workers)


def cmd_bench(argv: Sequence[str]) -> int:
    if argv and argv[0] == "compare":
        from tui_engineer.bench.compare import cmd_compare

        return cmd_compare(argv[1:])
    if argv and argv[0] == "export":
        from tui_engineer.bench.dataset import cmd_export

        return cmd_export(argv[1:])
    parser = build_bench_parser()
    args = parser.parse_args(argv)
    _check_counts(parser, args)
    request = _request(parser, args)
    with _oracle(args, request):
        return _run(args, request)


@contextmanager
def _oracle(args: argparse.Namespace, request) -> Iterator[None]:
    """--oracle: the example solutions served as a model on 127.0.0.1 for the bench's length."""
    if not args.oracle:
        yield
        return
    from tui_engineer.bench.oracle import oracle_answer
    from tui_engineer.demo.server import MODEL, DemoServer

    with DemoServer(oracle_answer(request.tasks), pace=0) as server:
        request.flags.update(base_url=server.base_url, model=MODEL)
        os.environ.setdefault("OPENAI_API_KEY", "oracle")  # the server asks for no key
        yield


def _run(args: argparse.Namespace, request) -> int:
    from tui_engineer.bench.bench import run_bench
    from tui_engineer.bench.polyglot import aider_table, shapes_table
    from tui_engineer.bench.progress import TerminalProgress
    from tui_engineer.bench.results import markdown_table

    if args.tui:
        results = _run_in_tui(request, _executor(args))
    else:
        progress = None if args.no_progress or not sys.stderr.isatty() else TerminalProgress()
        results = asyncio.run(run_bench(request, _executor(args), progress))
    if not results:
        raise UserError("The bench ran nothing.")
    print(markdown_table(results), end="")
    print("\nIn aider's leaderboard columns (docs/bench.md):")
    print(aider_table(results), end="")
    if shapes := shapes_table(results):
        print("\nReplies by shape (docs/protocol.md):")
        print(shapes, end="")
    _pictures(request.out, results)
    print(f"Results in {request.out} (results.md, results.csv, records/)")
    if request.replay is not None:
        return _check_replay(request.replay, results)
    return 0


def _run_in_tui(request, execute) -> list:
    from tui_engineer.bench.app import BenchApp
    from tui_engineer.tui.themes import dress

    app = BenchApp(request, execute, dress)
    app.run()
    if app.error is not None:
        raise app.error
    return app.results


def _pictures(out: Path, results: list) -> None:
    from tui_engineer.bench.plots import terminal_bars, write_png

    terminal_bars({"": results})
    try:
        write_png({"": results}, out / "results.png")
    except UserError as err:  # no matplotlib: the tables are still there
        print(f"(no results.png: {err})", file=sys.stderr)


def _check_replay(recorded_folder: Path, results: list) -> int:
    """A replay must end like its recording; any difference is a change in the engine's
    behaviour, and fails (exit 1) so CI notices."""
    from tui_engineer.bench.results import outcome_differences, read_results

    changed = outcome_differences(read_results(recorded_folder), results)
    if not changed:
        print(f"Replay matches the recording in {recorded_folder}.")
        return 0
    print(f"Replay differs from the recording in {recorded_folder}:", file=sys.stderr)
    for line in changed:
        print(f"  {line}", file=sys.stderr)
    return 1
