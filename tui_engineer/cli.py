"""Command line entry point. Imports stay lazy so `--help` and `--version` are instant."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from tui_engineer import __version__
from tui_engineer.errors import UserError
from tui_engineer.terminal import require_terminal


def _add_model_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model and verification")
    group.add_argument("--model", help="model name (e.g. gpt-4o-mini)")
    group.add_argument("--base-url", help="OpenAI-compatible server URL")
    group.add_argument("--test-cmd", dest="test_command", help="command that runs the tests")
    group.add_argument("--test-timeout", type=float, help="seconds before a test run is killed")
    group.add_argument("--max-fix-attempts", type=int, help="fix attempts per step (default 3)")
    group.add_argument(
        "--sandbox",
        choices=["local", "docker", "none"],
        help="where tests run: local (bubblewrap), docker, or none (uncontained)",
    )
    group.add_argument(
        "--allow-network",
        action="store_const",
        const=True,
        help="let the tests reach the network (only you can allow it, never a repo's config)",
    )
    group.add_argument(
        "--full-tests-always",
        action="store_const",
        const=True,
        help="run the whole test suite on every attempt (default: affected tests first)",
    )
    group.add_argument(
        "--no-pipeline",
        dest="pipeline",
        action="store_const",
        const=False,
        help="do not prepare the next step while you review one",
    )
    group.add_argument(
        "--no-test-first",
        dest="test_first",
        action="store_const",
        const=False,
        help="do not make steps that add behaviour write a failing test first",
    )
    group.add_argument(
        "--approval",
        choices=["ask", "auto"],
        help="ask: review every step (default); auto: a step whose tests pass is committed "
        "unasked, one that fails or that no test verified is still reviewed",
    )
    group.add_argument("--max-tokens", type=int, help="token budget for the session")
    group.add_argument("--max-usd", type=float, help="money budget for the session (USD)")
    group.add_argument("--max-minutes", type=float, help="wall-clock budget for the session")
    group.add_argument("-C", "--repo", type=Path, default=None, help="repo folder (default: .)")


def _add_resume_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="RUN",
        help="go on with the last stopped session of this repository (or session RUN, as "
        "`tui-engineer runs` lists it): its plan, accepted steps and chat, no new plan",
    )


def _add_no_tests_flags(parser: argparse.ArgumentParser) -> None:
    """What to do in a repository with no test command (a new project, say)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--write-tests",
        dest="no_tests",
        action="store_const",
        const="write",
        default="",
        help="when no test command is found: the first step writes the tests (test-first)",
    )
    group.add_argument(
        "--unverified",
        dest="no_tests",
        action="store_const",
        const="unverified",
        help="run no tests: every step is reviewed and committed marked 'unverified'",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer",
        description="A pair-programmer in your terminal. Run it inside a git repository.",
        epilog="Subcommands: 'tui-engineer config' shows the effective settings; "
        "'tui-engineer run REQUEST' works headless; 'tui-engineer bench SUITE' evaluates the "
        "engine; 'tui-engineer demo' tries it with a built-in model; 'tui-engineer serve' "
        "runs it in a browser; 'tui-engineer doctor' checks what a session needs; "
        "'tui-engineer acp' serves an editor over the Agent Client Protocol. See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"tui-engineer {__version__}")
    parser.add_argument("request", nargs="?", help="what you want done (optional)")
    parser.add_argument("--init", action="store_true", help="create a git repository here first")
    _add_resume_flag(parser)
    _add_no_tests_flags(parser)
    _add_model_flags(parser)
    return parser


def build_config_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer config",
        description="Print the effective settings and where each one came from.",
    )
    _add_model_flags(parser)
    return parser


def build_doctor_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer doctor",
        description="Check what a session needs here (git, the repository, the sandbox, the "
        "model server, the test command, config files) and say what to do for each miss. "
        "Exit 0 when a session can start, else 1.",
    )
    _add_model_flags(parser)
    return parser


def _cmd_doctor(argv: Sequence[str]) -> int:
    from tui_engineer.doctor import run_doctor

    args = build_doctor_parser().parse_args(argv)
    start = (args.repo or Path.cwd()).resolve()
    print(f"tui-engineer doctor: {start}", flush=True)
    report = run_doctor(start, flag_overrides(args))
    print("\n".join(report.lines()))
    return 0 if report.can_start else 1


def build_run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer run",
        description="Work on REQUEST without the TUI: plan, edit, test, and commit each step.",
    )
    parser.add_argument("request", nargs="?", help="what you want done")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="nobody at the keys: --approval auto, and stop at a step that fails (an unverified "
        "session's steps are accepted)",
    )
    parser.add_argument("--json", action="store_true", help="print engine events as JSON lines")
    parser.add_argument("--no-plan", action="store_true", help="do the request as a single step")
    parser.add_argument(
        "--allow-dirty", action="store_true", help="start on top of uncommitted changes"
    )
    parser.add_argument("--no-record", action="store_true", help="do not write a run record")
    parser.add_argument("--replay", type=Path, help="use a recorded run's model replies")
    _add_resume_flag(parser)
    _add_no_tests_flags(parser)
    _add_model_flags(parser)
    return parser


def build_acp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-engineer acp",
        description="Serve the Agent Client Protocol on stdin/stdout, for an editor (Zed, "
        "Neovim, JetBrains, toad...): each session works in the folder the editor names, with "
        "the settings given here and in the usual config files. See docs/acp.md.",
    )
    parser.add_argument(
        "--allow-dirty", action="store_true", help="start sessions on top of uncommitted changes"
    )
    _add_no_tests_flags(parser)
    _add_model_flags(parser)
    return parser


def _cmd_acp(argv: Sequence[str]) -> int:
    args = build_acp_parser().parse_args(argv)
    from tui_engineer.acp.agent import StartOptions
    from tui_engineer.acp.command import serve_stdio

    start = StartOptions(flag_overrides(args), allow_dirty=args.allow_dirty, no_tests=args.no_tests)
    return serve_stdio(start)


def flag_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The settings given on the command line (None means 'not given')."""
    keys = (
        "model",
        "base_url",
        "test_command",
        "test_timeout",
        "max_fix_attempts",
        "sandbox",
        "allow_network",
        "full_tests_always",
        "pipeline",
        "test_first",
        "max_tokens",
        "max_usd",
        "approval",
    )
    flags = {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}
    if getattr(args, "max_minutes", None) is not None:
        flags["max_wall_seconds"] = args.max_minutes * 60
    return flags


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
    import asyncio

    from tui_engineer.headless.printer import JsonPrinter, NotingCommits, ProgressPrinter
    from tui_engineer.headless.reviewers import AutoReviewer, TerminalReviewer, ask_without_tests
    from tui_engineer.session.prepare import NoTestCommand
    from tui_engineer.session.run import RunOptions, run_session
    from tui_engineer.session.signals import run_stoppable

    parser = build_run_parser()
    args = parser.parse_args(argv)
    request = args.request
    if args.resume is not None:
        _check_resume(parser, args)
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
    reviewer = AutoReviewer() if args.yes else TerminalReviewer()
    sink = NotingCommits(JsonPrinter() if args.json else ProgressPrinter())
    try:
        try:
            result, stopped_by = asyncio.run(run_stoppable(run_session(options, reviewer, sink)))
        except NoTestCommand:
            # Answering on the terminal anyway: offer what the TUI offers. --yes stops here.
            choice = None if args.yes else ask_without_tests()
            if choice is None:
                raise
            options.no_tests = choice
            result, stopped_by = asyncio.run(run_stoppable(run_session(options, reviewer, sink)))
    except KeyboardInterrupt:
        print(f"tui-engineer: interrupted; {sink.left()}", file=sys.stderr)
        return 130
    if result is None:
        name = stopped_by.name if stopped_by else "a signal"
        print(f"tui-engineer: stopped by {name}; {sink.left()}", file=sys.stderr)
        return 1
    return result.exit_code


def _check_resume(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--resume goes on with a recorded request: a new one, or a replay, is a different run."""
    if args.request:
        parser.error(
            f"--resume goes on with a recorded session, so it takes no REQUEST ({args.request!r}"
            "): name the session after --resume (tui-engineer runs lists them), or leave "
            "--resume out to start a new session"
        )
    if getattr(args, "replay", None) is not None:
        parser.error("--resume and --replay cannot be used together")


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


def build_demo_parser() -> argparse.ArgumentParser:
    from tui_engineer.demo import DEFAULT_REQUEST

    parser = argparse.ArgumentParser(
        prog="tui-engineer demo",
        description="Try the app with no key and no server: a sample repo in a temporary "
        "folder and a built-in scripted model (it plans, writes a test first, fails once, "
        "fixes, and reacts to a reject reason and to 'still wrong').",
    )
    parser.add_argument("request", nargs="?", default=DEFAULT_REQUEST, help="the request")
    parser.add_argument("--dir", type=Path, help="where to make the sample repo (default: temp)")
    return parser


def _cmd_demo(argv: Sequence[str]) -> int:
    args = build_demo_parser().parse_args(argv)
    require_terminal()

    from tui_engineer.demo import DemoServer, demo_flags, make_sample_repo
    from tui_engineer.session.options import RunOptions
    from tui_engineer.tui.app import TuiEngineerApp

    repo = make_sample_repo(args.dir)
    with DemoServer() as server:
        options = RunOptions(request=args.request, repo=repo, flags=demo_flags(server.base_url))
        code = TuiEngineerApp(options).run()
    # stderr: under `serve`, stdout is the app's channel to the web server, while stderr reaches
    # the server's console.
    print(
        f"tui-engineer demo: the sample repo is kept in {repo} (see its git log)", file=sys.stderr
    )
    return code if isinstance(code, int) else 0


def build_serve_parser() -> argparse.ArgumentParser:
    from tui_engineer.web import DEFAULT_HOST, DEFAULT_PORT

    parser = argparse.ArgumentParser(
        prog="tui-engineer serve",
        description="Run the app in a browser: each browser tab gets its own session. "
        "Any other argument (a REQUEST, -C REPO, --model, ...) is passed on to the app, "
        "or with --demo to 'tui-engineer demo'.",
        epilog="Whoever can open the page can edit files and run commands here, as you: keep "
        "the default 127.0.0.1 unless the network in between is yours.",
        allow_abbrev=False,  # unknown options pass on to the app; no prefix guessing
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"default {DEFAULT_PORT}")
    parser.add_argument("--demo", action="store_true", help="serve 'tui-engineer demo'")
    parser.add_argument(
        "--public-url", help="the URL browsers use, if not http://HOST:PORT (e.g. behind a proxy)"
    )
    return parser


def _cmd_serve(argv: Sequence[str]) -> int:
    from tui_engineer.web import ServeOptions, serve

    args, app_args = build_serve_parser().parse_known_args(argv)
    # Check the passed-on arguments now, once, rather than in every browser tab.
    if args.demo:
        build_demo_parser().parse_args(app_args)
    else:
        _check_repo(build_parser().parse_args(app_args))
    serve(
        ServeOptions(
            host=args.host,
            port=args.port,
            demo=args.demo,
            public_url=args.public_url,
            app_args=tuple(app_args),
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
    from tui_engineer.bench.command import cmd_bench

    return cmd_bench(argv)


def _dispatch(argv: list[str]) -> int:
    commands = {
        "config": _cmd_config,
        "run": _cmd_run,
        "runs": _cmd_runs,
        "bench": _cmd_bench,
        "demo": _cmd_demo,
        "serve": _cmd_serve,
        "doctor": _cmd_doctor,
        "acp": _cmd_acp,
    }
    if argv and argv[0] in commands:
        return commands[argv[0]](argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.resume is not None:
        _check_resume(parser, args)
    require_terminal()
    # The TUI: Textual is imported here only, so --help and the headless commands stay fast.
    from tui_engineer.session.run import RunOptions
    from tui_engineer.tui.app import TuiEngineerApp

    options = RunOptions(
        request=args.request or "",
        repo=(args.repo or Path.cwd()).resolve(),
        flags=flag_overrides(args),
        no_tests=args.no_tests,
        resume=args.resume,
    )
    code = TuiEngineerApp(options, init=args.init).run()
    return code if isinstance(code, int) else 0


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
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _dispatch(argv)
    except UserError as err:
        from tui_engineer.names import readable  # a file name in it may not be UTF-8

        print(f"tui-engineer: {readable(str(err))}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("tui-engineer: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug of ours: said with the way out, never a traceback
        from tui_engineer.crash import INTERNAL_ERROR_EXIT, internal_error_message

        print(f"tui-engineer: {internal_error_message(err)}", file=sys.stderr)
        return INTERNAL_ERROR_EXIT
