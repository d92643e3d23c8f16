"""Command line entry point. Imports stay lazy so `--help` and `--version` are instant."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from tui_engineer.base.errors import UserError
from tui_engineer.cli.arguments import (
    build_acp_parser,
    build_config_parser,
    build_demo_parser,
    build_doctor_parser,
    build_parser,
    build_run_parser,
    build_serve_parser,
    check_resume,
    flag_overrides,
)
from tui_engineer.cli.launch import open_app, open_demo, reported

if TYPE_CHECKING:
    from tui_engineer.session.start import Problem


def _cmd_doctor(argv: Sequence[str]) -> int:
    from tui_engineer.cli.doctor import run_doctor

    args = build_doctor_parser().parse_args(argv)
    start = (args.repo or Path.cwd()).resolve()
    print(f"tui-engineer doctor: {start}", flush=True)
    report = run_doctor(start, flag_overrides(args))
    print("\n".join(report.lines()))
    return 0 if report.can_start else 1


def _cmd_acp(argv: Sequence[str]) -> int:
    args = build_acp_parser().parse_args(argv)
    from tui_engineer.acp.agent import StartOptions
    from tui_engineer.acp.command import serve_stdio

    start = StartOptions(flag_overrides(args), allow_dirty=args.allow_dirty, no_tests=args.no_tests)
    return serve_stdio(start)


def _cmd_config(argv: Sequence[str]) -> int:
    from tui_engineer.config import format_settings, load_settings
    from tui_engineer.vcs.repo import find_repo_root

    args = build_config_parser().parse_args(argv)
    start = (args.repo or Path.cwd()).resolve()
    try:
        root: Path | None = find_repo_root(start)
    except UserError:
        root = None
    loaded = load_settings(root, flag_overrides(args))
    print(format_settings(loaded))
    return 0


def _cmd_run(argv: Sequence[str]) -> int:
    from tui_engineer.base import start_collection

    start_collection.hold()  # until the model client is made (session/run.py), or the end
    try:
        return _run(argv)
    finally:
        start_collection.release()


def _run(argv: Sequence[str]) -> int:
    import asyncio

    from tui_engineer.engine.reviews.approval import AutoReviewer
    from tui_engineer.headless.printer import JsonPrinter, NotingCommits, ProgressPrinter
    from tui_engineer.headless.reviewers import TerminalReviewer
    from tui_engineer.session.run import RunOptions, run_session
    from tui_engineer.session.signals import run_stoppable
    from tui_engineer.session.start import apply_choice, describe

    parser = build_run_parser()
    args = parser.parse_args(argv)
    request = args.request
    if args.resume is not None:
        check_resume(parser, args)
        request = ""  # the recorded session's (session/resume.py)
    if request is None and args.replay is not None:
        from tui_engineer.records import ReplayModel

        request = ReplayModel(args.replay).request
    if not request and args.resume is None:
        parser.error('give a REQUEST, e.g. tui-engineer run "add a --json flag"')
    flags = flag_overrides(args)
    if args.yes:
        flags["approval"] = "auto"  # what --yes means; its reviewer stops where auto would ask
    options = RunOptions(
        request=request,
        repo=(args.repo or Path.cwd()).resolve(),
        flags=flags,
        plan=not args.no_plan,
        allow_dirty=args.allow_dirty,
        record=not args.no_record,
        replay=args.replay,
        no_tests=args.no_tests,
        resume=args.resume,
    )
    reviewer = AutoReviewer() if args.yes else TerminalReviewer(repo=options.repo)
    sink = NotingCommits(JsonPrinter() if args.json else ProgressPrinter())
    try:
        try:
            result, stopped_by = asyncio.run(run_stoppable(run_session(options, reviewer, sink)))
        except UserError as err:
            # Answering on the terminal anyway: offer what the TUI offers when no tests were
            # found or another session holds the repository (asked here, outside the event
            # loop, so Ctrl-C stops the question). --yes stops on every problem.
            problem = describe(options, err)
            choice = None if args.yes else _ask_about(problem)
            if choice is None:
                raise
            said = apply_choice(options, problem, choice)
            if said:
                print(f"tui-engineer: {said}", file=sys.stderr)
            result, stopped_by = asyncio.run(run_stoppable(run_session(options, reviewer, sink)))
    except KeyboardInterrupt:
        print(f"tui-engineer: interrupted; {sink.left()}", file=sys.stderr)
        return 130
    if result is None:
        name = stopped_by.name if stopped_by else "a signal"
        print(f"tui-engineer: stopped by {name}; {sink.left()}", file=sys.stderr)
        return 1
    return result.exit_code


def _ask_about(problem: Problem) -> str | None:
    """The terminal's question for a start-up problem it can answer, or None (stop)."""
    from tui_engineer.headless.reviewers import ask_take_over, ask_without_tests

    if problem.kind == "no_tests":
        return ask_without_tests()
    if problem.kind == "elsewhere":
        return ask_take_over(problem.message)
    return None


def _cmd_runs(argv: Sequence[str]) -> int:
    from tui_engineer.records.listing import format_runs, list_runs
    from tui_engineer.vcs.repo import find_repo_root

    parser = argparse.ArgumentParser(
        prog="tui-engineer runs", description="List recorded sessions."
    )
    parser.add_argument("-C", "--repo", type=Path, default=None, help="repo folder (default: .)")
    args = parser.parse_args(argv)
    print(format_runs(list_runs(find_repo_root((args.repo or Path.cwd()).resolve()))))
    return 0


def _cmd_serve(argv: Sequence[str]) -> int:
    from tui_engineer.cli.web import ServeOptions, serve

    args, app_args = build_serve_parser().parse_known_args(argv)
    # Check the passed-on arguments now, once, rather than in every browser tab.
    repo = None
    if args.demo:
        build_demo_parser().parse_args(app_args)
    else:
        app = build_parser().parse_args(app_args)
        _check_repo(app)
        repo = (app.repo or Path.cwd()).resolve()
    serve(
        ServeOptions(
            host=args.host,
            port=args.port,
            demo=args.demo,
            public_url=args.public_url,
            app_args=tuple(app_args),
            repo=repo,
        )
    )
    return 0


def _check_repo(args: argparse.Namespace) -> None:
    """A missing repo fails here, in the terminal, not as an error screen in each tab."""
    if args.init:
        return
    from tui_engineer.vcs.repo import find_repo_root

    find_repo_root((args.repo or Path.cwd()).resolve())


def _cmd_bench(argv: Sequence[str]) -> int:
    from tui_engineer.cli.bench import cmd_bench

    return cmd_bench(argv)


def _dispatch(argv: list[str]) -> int:
    commands = {
        "config": _cmd_config,
        "run": _cmd_run,
        "runs": _cmd_runs,
        "bench": _cmd_bench,
        "demo": open_demo,
        "serve": _cmd_serve,
        "doctor": _cmd_doctor,
        "acp": _cmd_acp,
    }
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    return open_app(argv)


# Commands after which the process ends at once (see program()).
_QUICK_EXIT = {"run", "acp"}


def program() -> NoReturn:
    """The program's entry point (the `tui-engineer` script, `python -m tui_engineer`): main(),
    then, after a headless run, the process ends without the interpreter's own teardown.
    Everything the run held is released by then (shadow removed, record and sandbox closed), and
    unwinding the model SDK's modules took 0.2–2 s on the project machine, longer than all of a
    one-edit session's git work."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv and argv[0] in _QUICK_EXIT:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed, or a reader gone
                stream.flush()
        os._exit(code)
    raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    return reported(_dispatch, list(sys.argv[1:] if argv is None else argv))
